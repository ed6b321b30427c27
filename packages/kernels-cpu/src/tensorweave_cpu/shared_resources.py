"""Finding a stateful op's resource: under ``shared_name`` in the node's container (shared by every session
on the target), or under a name private to the session, as TF's unshared queues and readers. Private
resources are deleted (and their waiting steps failed) when their session is garbage-collected, so
sessions on a long-lived shared target do not leak them."""

import itertools
import threading
import weakref

from tensorweave.extension import DEFAULT_CONTAINER, ResourceHandle, errors

_session_ids = weakref.WeakKeyDictionary()
_private = {}  # session id -> [(resource manager, container, name)]
_session_counter = itertools.count(1)
# re-entrant: a garbage collection inside the lock (any allocation can start one) may finalize another,
# dead session on this thread, and its _drop_private takes the lock again
_lock = threading.RLock()


def _session_id(session):
    with _lock:
        sid = _session_ids.get(session)
        if sid is None:
            sid = _session_ids[session] = next(_session_counter)
            _private[sid] = []
            weakref.finalize(session, _drop_private, sid)
    return sid


def _drop_private(sid):
    with _lock:
        owned = _private.pop(sid, [])
    for manager, container, name in owned:
        try:
            manager.delete(container, name)
        except errors.NotFoundError:
            pass  # already cleared by Session.reset


def find_or_make(ctx, node, make):
    """The handle of ``node``'s resource, made by ``make(display_name)`` the first time."""
    attrs = node.attrs
    container = attrs.get("container") or DEFAULT_CONTAINER
    shared_name = attrs.get("shared_name")
    manager = ctx.resource_manager
    if shared_name or ctx.step.session is None:
        name = shared_name or f"_{ctx.step.step_id}_{node.name}"
        resource = manager.lookup_or_create(container, name, lambda: make(shared_name or node.name))
    else:
        sid = _session_id(ctx.step.session)
        name = f"_{sid}_{node.name}"

        def create():
            with _lock:
                _private.get(sid, []).append((manager, container, name))
            return make(node.name)
        resource = manager.lookup_or_create(container, name, create)
    return ResourceHandle(ctx.device.name, container, name, resource)
