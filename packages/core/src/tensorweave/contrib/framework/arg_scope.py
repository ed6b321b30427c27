"""``arg_scope`` and ``add_arg_scope``: default keyword arguments for chosen functions within a ``with`` block, as
TF1's contrib.framework (and slim) has them.

The stack of scopes is per thread, as a name scope is: a scope opened in one thread does not leak into another.
"""

import contextlib
import functools
import inspect
import threading

__all__ = ["add_arg_scope", "arg_scope", "arg_scope_func_key", "arg_scoped_arguments", "current_arg_scope",
           "has_arg_scope"]

_STACK = threading.local()


def _stack():
    if not hasattr(_STACK, "scopes"):
        _STACK.scopes = [{}]
    return _STACK.scopes


def current_arg_scope():
    """The innermost scope: ``{function key: {argument: default}}``."""
    return _stack()[-1]


def arg_scope_func_key(op):
    return getattr(op, "_key_op", str(op))


@contextlib.contextmanager
def arg_scope(list_ops_or_scope, **kwargs):
    """Within the block, each function of ``list_ops_or_scope`` (decorated with ``add_arg_scope``) gets ``kwargs``
    as defaults (arguments given at the call win; inner scopes add to and override outer ones). Pass a scope
    yielded by an earlier ``arg_scope`` (a dict) and no kwargs to re-enter it."""
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, kwargs must be empty.")
        _stack().append(list_ops_or_scope)
        try:
            yield list_ops_or_scope
        finally:
            _stack().pop()
        return
    if not isinstance(list_ops_or_scope, (list, tuple)):
        raise TypeError(f"list_ops_or_scope must either be a list/tuple or reused scope (i.e. dict), got "
                        f"{type(list_ops_or_scope).__name__}")
    current = {key: dict(args) for key, args in current_arg_scope().items()}
    for op in list_ops_or_scope:
        key = arg_scope_func_key(op)
        if not has_arg_scope(op):
            raise ValueError(f"{key} is not decorated with @add_arg_scope")
        current.setdefault(key, {}).update(kwargs)
    _stack().append(current)
    try:
        yield current
    finally:
        _stack().pop()


def add_arg_scope(func):
    """Lets ``arg_scope`` supply defaults for ``func``'s keyword arguments."""
    @functools.wraps(func)
    def func_with_args(*args, **kwargs):
        defaults = current_arg_scope().get(key)
        return func(*args, **({**defaults, **kwargs} if defaults else kwargs))
    key = func_with_args._key_op = arg_scope_func_key(func)
    return func_with_args


def has_arg_scope(func):
    return hasattr(func, "_key_op")


def arg_scoped_arguments(func):
    """The names of the arguments ``func`` (decorated) takes, which an arg_scope may set."""
    return list(inspect.signature(func).parameters)
