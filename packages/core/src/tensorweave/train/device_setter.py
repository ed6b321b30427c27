"""``tf.train.replica_device_setter``: variables on parameter-server tasks, everything else on the worker.

As in TF 1.x, the setter is a device function for ``tf.device``: ops whose type is in ``ps_ops`` (variable
handles and mutable tables) go to ``ps_device`` with a task picked by ``ps_strategy`` (round robin by
default), all other ops to ``worker_device``; fields set by enclosing or inner device scopes win.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.train.server_lib import ClusterSpec

__all__ = ["GreedyLoadBalancingStrategy", "STANDARD_PS_OPS", "byte_size_load_fn", "replica_device_setter"]

STANDARD_PS_OPS = ("Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
                   "MutableDenseHashTable", "MutableDenseHashTableV2")


class _RoundRobinStrategy:
    """Ps task 0, 1, ..., n-1, 0, ... for successive ps ops."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


def byte_size_load_fn(op):
    """The bytes a variable op holds (its ``shape`` attr, or its first output's shape, times the dtype size)."""
    attrs = op.attrs
    shape, dtype = attrs.get("shape"), attrs.get("dtype")
    if shape is None and op.outputs:
        shape, dtype = op.outputs[0].shape, op.outputs[0].dtype
    shape = tensor_shape.as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"byte_size_load_fn needs a fully defined shape, but op {op.name!r} ({op.type}) has "
                         f"shape {shape}; give the variable a static shape or use the default round robin")
    size = getattr(dtype, "size", None)
    if size is None:
        size = dtypes.as_dtype(dtype).size
    return int(np.prod(shape.as_list(), dtype=np.int64)) * size


class GreedyLoadBalancingStrategy:
    """Puts each ps op on the ps task with the least load so far (``load_fn(op)``, bytes by default)."""

    def __init__(self, num_tasks, load_fn=None):
        if not isinstance(num_tasks, int) or num_tasks < 1:
            raise ValueError(f"GreedyLoadBalancingStrategy needs num_tasks >= 1, got {num_tasks!r}")
        self._num_tasks = num_tasks
        self._load_fn = load_fn or byte_size_load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op):
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op):
        current = DeviceSpec.from_string(op.device or "")
        if not self._merge_devices and op.device:
            return current.to_string()
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = DeviceSpec.from_string(self._ps_device)
            if ps.job and (not current.job or current.job == ps.job):
                ps.task = self._ps_strategy(op)
            return ps.merge_from(current).to_string()
        return DeviceSpec.from_string(self._worker_device or "").merge_from(current).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker", merge_devices=True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for ``tf.device`` placing variables on ps tasks and other ops on the worker.

    ``cluster`` (a ClusterSpec or dict) sets ``ps_tasks`` to the size of the ps job. Returns None (no
    placement) when there are no ps tasks, as TF does.
    """
    if cluster is not None:
        spec = cluster.as_dict() if hasattr(cluster, "as_dict") else _cluster_dict(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job
        if ps_job not in spec or not spec[ps_job]:
            return None
        ps_tasks = len(spec[ps_job])
    if not isinstance(ps_tasks, int) or ps_tasks < 0:
        raise ValueError(f"replica_device_setter: ps_tasks must be a non-negative int, got {ps_tasks!r}")
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError(f"replica_device_setter: ps_strategy must be callable (op -> ps task index), got "
                        f"{ps_strategy!r}")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy)
    return chooser.device_function


def _cluster_dict(cluster):
    return ClusterSpec(cluster).as_dict()
