"""The cost model of the white paper: how long each op takes on a device and how long each
cross-device edge takes to travel, first estimated from shapes (flops and bytes per op type),
then replaced by times measured in traced steps.

The placer's simulated execution and the executor's choice between straight-line and parallel
execution read it; ``Session.run`` with ``RunOptions(trace_level=...)`` feeds it.
"""

import threading

PER_OP_SECONDS = 2e-6  # one kernel call's fixed cost (Python dispatch, numpy's own overhead)
TRANSFER_SECONDS = 2e-5  # one Send/Recv pair's fixed cost inside a process
NETWORK_BYTES_PER_SECOND = 1e9  # between tasks, until a transport says otherwise
UNKNOWN_DIM = 1  # a dimension unknown before the run counts as this many elements
HEAVY_SECONDS = 5e-5  # ops at least this long are worth running on a thread beside others
_SMOOTHING = 0.5  # weight of the newest measurement
# ops that move no data: plumbing, and the ones whose kernel hands its input on (a reference, not a copy)
_PLUMBING = frozenset(("_Arg", "_Retval", "_Send", "_Recv", "_ControlToken", "NoOp", "Identity", "IdentityN",
                       "StopGradient", "PreventGradient"))


def num_elements(shape):
    """Elements of a static shape; unknown dimensions count as UNKNOWN_DIM, unknown rank as one."""
    dims = None if shape is None else shape.as_tuple()
    if dims is None:
        return 1
    n = 1
    for d in dims:
        n *= UNKNOWN_DIM if d is None else d
    return n


def _dims(shape):
    dims = None if shape is None else shape.as_tuple()
    return None if dims is None else [UNKNOWN_DIM if d is None else d for d in dims]


def _input_shape(node, i):
    src, slot = node.inputs[i]
    return src.output_shapes[slot]


def _matmul_flops(node):
    a = _dims(_input_shape(node, 0))
    out = node.output_shapes[0]
    if a is None or len(a) < 2:
        return None
    transposed = node.attrs.get("transpose_a", False) or node.attrs.get("adj_x", False)
    k = a[-2] if transposed else a[-1]
    return 2 * num_elements(out) * k


def _conv_flops(node):
    filt = _dims(_input_shape(node, 1))
    if filt is None or len(filt) != 4:
        return None
    return 2 * num_elements(node.output_shapes[0]) * filt[0] * filt[1] * filt[2]


def _conv_backprop_flops(node):
    filt = _dims(_input_shape(node, 1)) if node.op_type.endswith("Input") else None
    grad = _dims(_input_shape(node, 2))
    if grad is None:
        return None
    taps = filt[0] * filt[1] * filt[2] if filt is not None and len(filt) == 4 else 9
    n = 1
    for d in grad:
        n *= d
    return 2 * n * taps


def _fused_flops(node):
    return num_elements(node.output_shapes[0]) * len(node.attrs.get("fused_ops", ()))


FLOPS = {
    "_FusedElementwise": _fused_flops,
    "MatMul": _matmul_flops,
    "BatchMatMul": _matmul_flops,
    "BatchMatMulV2": _matmul_flops,
    "Conv2D": _conv_flops,
    "Conv2DBackpropInput": _conv_backprop_flops,
    "Conv2DBackpropFilter": _conv_backprop_flops,
}
"""Op type -> fn(node) giving its floating-point operations (None: use the default estimate).
Plugins may add their own op types here."""


INTRA_OP_PARALLEL = frozenset(("MatMul", "BatchMatMul", "BatchMatMulV2", "Conv2D", "Conv2DBackpropInput",
                               "Conv2DBackpropFilter"))
"""Op types whose host kernels already use every core (BLAS): overlapping them with other ops on
threads gains nothing (measured: two 1024² products take as long either way on 2 cores)."""


def output_bytes(node, slot):
    """Bytes of one output, from its static shape and dtype."""
    return num_elements(node.output_shapes[slot]) * node.output_dtypes[slot].size


class CostModel:
    """Per-session estimates, refined by measurements (keyed by node name and device type)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._seconds = {}  # (node name, device type) -> measured seconds
        self._bytes = {}  # node name -> measured output bytes
        self.steps_observed = 0

    # ---- estimates -----------------------------------------------------------------------
    def compute_seconds(self, node, device):
        """Estimated or measured time of ``node`` on ``device``."""
        if self._seconds:
            measured = self._seconds.get((node.name, device.device_type))
            if measured is not None:
                return measured
        if node.op_type in _PLUMBING or node.op_def.executor_role is not None:
            return PER_OP_SECONDS / 4
        rule = FLOPS.get(node.op_type)
        flops = rule(node) if rule is not None else None
        moved = 0
        for src, slot in node.inputs:
            moved += self.tensor_bytes(src, slot)
        largest = 0
        made = 0
        for slot in range(len(node.output_dtypes)):
            elements = num_elements(node.output_shapes[slot])
            largest = max(largest, elements)
            made += elements * node.output_dtypes[slot].size
        moved += self._bytes.get(node.name, made) if self._bytes else made
        if flops is None:
            flops = largest
        return PER_OP_SECONDS + flops / device.flops_per_second + moved / device.bytes_per_second

    def tensor_bytes(self, node, slot):
        if self._bytes:
            measured = self._bytes.get(node.name)
            if measured is not None and len(node.output_dtypes) == 1:
                return measured
        return num_elements(node.output_shapes[slot]) * node.output_dtypes[slot].size

    def transfer_seconds(self, nbytes, src_device, dst_device):
        """Time for one tensor to cross from ``src_device`` to ``dst_device``."""
        if src_device is dst_device or src_device.name == dst_device.name:
            return 0.0
        same_task = src_device.name.rsplit("/device:", 1)[0] == dst_device.name.rsplit("/device:", 1)[0]
        if same_task and src_device.is_host and dst_device.is_host:
            return TRANSFER_SECONDS  # handed over by reference
        rate = NETWORK_BYTES_PER_SECOND if not same_task else min(src_device.bytes_per_second,
                                                                   dst_device.bytes_per_second)
        return TRANSFER_SECONDS + nbytes / rate

    def is_heavy(self, node, device):
        return self.compute_seconds(node, device) >= HEAVY_SECONDS

    def overlap_seconds(self, nodes, device):
        """How much heavy work could overlap: heavy work in all minus heavy work on the longest path.

        Light ops count as zero (a second thread only contends for the GIL on them), and so do ops whose
        host kernels already run on every core (``INTRA_OP_PARALLEL``).
        """
        in_part = {id(n) for n in nodes}
        longest = {}
        total = 0.0
        for node in nodes:
            if device.is_host and node.op_type in INTRA_OP_PARALLEL:
                cost = 0.0
            else:
                cost = self.compute_seconds(node, device)
                cost = cost if cost >= HEAVY_SECONDS else 0.0
            total += cost
            before = 0.0
            for src in [s for s, _ in node.inputs] + list(node.control_inputs):
                if id(src) in in_part and id(src) in longest:
                    before = max(before, longest[id(src)])
            longest[id(node)] = before + cost
        return total - max(longest.values(), default=0.0)

    # ---- measurements --------------------------------------------------------------------
    def observe(self, step_stats):
        """Takes the op times and output sizes of a traced step (``RunMetadata.step_stats``)."""
        with self._lock:
            for dev in step_stats.dev_stats:
                device_type = dev.device.rsplit("/device:", 1)[-1].split(":")[0]
                for ns in dev.node_stats:
                    if ns.op_type in ("_Send", "_Recv", "_Arg", "_Retval", "_ControlToken"):
                        continue  # their times are waiting, not work
                    seconds = max(ns.op_end_rel_micros - ns.op_start_rel_micros, 0) / 1e6
                    key = (ns.node_name, device_type)
                    old = self._seconds.get(key)
                    self._seconds[key] = seconds if old is None else old + _SMOOTHING * (seconds - old)
                    self._bytes[ns.node_name] = ns.output_bytes
            self.steps_observed += 1

    def measured_seconds(self, node_name, device_type="CPU"):
        return self._seconds.get((node_name, device_type))
