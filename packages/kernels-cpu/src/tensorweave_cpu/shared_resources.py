"""Finding a stateful op's resource: under ``shared_name`` in the node's container (shared by every session
on the target), or under a name private to the session, as TF's unshared queues and readers."""

import itertools
import threading
import weakref

from tensorweave.extension import ResourceHandle
from tensorweave.runtime.resources import DEFAULT_CONTAINER

_session_ids = weakref.WeakKeyDictionary()
_session_counter = itertools.count(1)
_lock = threading.Lock()


def _private_name(step, node):
    session = step.session
    if session is None:
        return f"_{step.step_id}_{node.name}"
    with _lock:
        sid = _session_ids.get(session)
        if sid is None:
            sid = _session_ids[session] = next(_session_counter)
    return f"_{sid}_{node.name}"


def find_or_make(ctx, node, make):
    """The handle of ``node``'s resource, made by ``make(display_name)`` the first time."""
    attrs = node.attrs
    container = attrs.get("container") or DEFAULT_CONTAINER
    name = attrs.get("shared_name") or _private_name(ctx.step, node)
    resource = ctx.resource_manager.lookup_or_create(container, name,
                                                     lambda: make(attrs.get("shared_name") or node.name))
    return ResourceHandle(ctx.device.name, container, name, resource)
