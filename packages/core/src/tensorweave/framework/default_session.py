"""The default-session stack: ``with sess.as_default():`` makes ``sess`` the session in which ``Tensor.eval()``,
``Operation.run()`` and ``Variable.eval()`` run, per thread. It lives beside the graph (TF1 keeps it in
``framework/ops.py``) so that tensors and variables need nothing from the runtime to find their session."""

import contextlib
import threading


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack = []


_default_sessions = _DefaultSessionStack()


def get_default_session():
    return _default_sessions.stack[-1] if _default_sessions.stack else None


@contextlib.contextmanager
def default_session(session):
    """Makes ``session`` this thread's default session for the ``with`` block (``Session.as_default``)."""
    _default_sessions.stack.append(session)
    try:
        yield session
    finally:
        _default_sessions.stack.remove(session)


def get_default_session_or_raise(session, what):
    session = session or get_default_session()
    if session is None:
        raise ValueError(f"cannot evaluate {what!r}: no default session is registered. Use "
                         f"`with sess.as_default():`, an InteractiveSession, or pass session=sess")
    if session.graph is not what.graph:
        raise ValueError(f"cannot evaluate {what!r}: its graph is not the session's graph")
    return session
