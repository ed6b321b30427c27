"""What graph passes may touch: which nodes are pure (safe to merge or evaluate early), and how to
compare two nodes' attributes."""

import hashlib
import numbers

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.runtime.kernels import find_kernel_def
from tensorweave.runtime.plan_graph import PlanNode

_HANDLE_DTYPES = (dtypes.resource, dtypes.variant)


def is_pure(node):
    """A node whose outputs depend only on its inputs and attrs: no state or randomness (``is_stateful``), no
    control flow, no feed (``is_placeholder``), no runtime plumbing, no resource handles. Only such nodes are
    merged or folded."""
    op_def = node.op_def
    if op_def.is_stateful or op_def.executor_role is not None or op_def.is_plumbing or op_def.is_placeholder:
        return False
    resource, variant = _HANDLE_DTYPES  # DTypes are interned: identity, not DType.__eq__ (a pass asks per node)
    for t in node.output_dtypes:
        if t is resource or t is variant:
            return False
    for src, i in node.inputs:
        t = src.output_dtypes[i]
        if t is resource or t is variant:
            return False
    return True


def attr_key(value):
    """A hashable key equal for equal attribute values (arrays by dtype, shape and bytes)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return ("nd", value.shape, tuple(map(attr_key, value.ravel().tolist())))
        data = np.ascontiguousarray(value).tobytes()
        if len(data) > 64:
            data = hashlib.blake2b(data, digest_size=16).digest()
        return ("nd", value.dtype.str, value.shape, data)
    if isinstance(value, np.generic):
        return ("np", value.dtype.str, value.tobytes())
    if isinstance(value, dtypes.DType):
        return value  # DTypes are interned
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(attr_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, attr_key(v)) for k, v in value.items())))
    if isinstance(value, (str, bytes, bool)) or value is None:
        return value
    if isinstance(value, numbers.Number):
        return (type(value).__name__, repr(value))
    if hasattr(value, "as_list") and hasattr(value, "ndims"):  # TensorShape
        return ("shape", None if value.ndims is None else tuple(value.as_list()))
    try:
        hash(value)
        return (type(value).__name__, value)
    except TypeError:
        return ("id", id(value))


def dedupe(nodes):
    """Nodes in order without repeats (by identity)."""
    seen, out = set(), []
    for n in nodes:
        if id(n) not in seen:
            seen.add(id(n))
            out.append(n)
    return out


class ReplacementPlacement:
    """Which device type each node would run on, as the placer would choose it for a lone op, when that type
    also has a kernel for the op a pass replaces such nodes with (``replacement``, an OpDef; ``probe_dtype`` its
    output dtype when probing)."""

    def __init__(self, device_mgr, registries, replacement, probe_dtype):
        self.device_mgr = device_mgr
        self.registries = registries
        self._probe = PlanNode("probe", replacement.name, {}, [], [], [probe_dtype], op_def=replacement)
        self._devices = {}
        self._replaceable = {}

    def device_type(self, node):
        """The device type of the first device matching the node's request with a plain kernel for it
        (None if that type has no kernel for the replacement)."""
        devices = self._devices.get(node.requested_device)
        if devices is None:
            try:
                devices = self.device_mgr.matching(DeviceSpec.from_string(node.requested_device))
            except ValueError:
                devices = []
            self._devices[node.requested_device] = devices
        for device in devices:
            kernel = find_kernel_def(self.registries, node, device.device_type)
            if kernel is not None:
                return device.device_type if not kernel.context and self._runs_replacement(device.device_type) else None
        return None

    def _runs_replacement(self, device_type):
        ok = self._replaceable.get(device_type)
        if ok is None:
            ok = self._replaceable[device_type] = find_kernel_def(self.registries, self._probe, device_type) is not None
        return ok
