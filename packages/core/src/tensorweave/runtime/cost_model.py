"""The cost model of the white paper: how long each op takes on a device and how long each
cross-device edge takes to travel, first estimated from shapes (flops from each OpDef's ``flops_fn``,
bytes), then replaced by times measured in traced steps.

The placer's simulated execution and the executor's choice between straight-line and parallel
execution read it; ``Session.run`` with ``RunOptions(trace_level=...)`` feeds it.
"""

import threading

from tensorweave.framework.flops import num_elements
from tensorweave.framework.registry import get_registries

PER_OP_SECONDS = 2e-6  # one kernel call's fixed cost (Python dispatch, numpy's own overhead)
TRANSFER_SECONDS = 2e-5  # one Send/Recv pair's fixed cost inside a process
NETWORK_BYTES_PER_SECOND = 1e9  # between tasks, until a transport says otherwise
HEAVY_SECONDS = 5e-5  # ops at least this long are worth running on a thread beside others
_SMOOTHING = 0.5  # weight of the newest measurement


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
        op_def = node.op_def
        if op_def.is_plumbing or op_def.is_pass_through or op_def.executor_role is not None:
            return PER_OP_SECONDS / 4  # moves no data: hands a value on, or is run by the executor itself
        flops = op_def.flops_fn(node) if op_def.flops_fn is not None else None
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
        host kernels already run on every core (``OpDef.is_intra_op_parallel``).
        """
        in_part = {id(n) for n in nodes}
        longest = {}
        total = 0.0
        for node in nodes:
            if device.is_host and node.op_def.is_intra_op_parallel:
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
        ops = get_registries().ops
        with self._lock:
            for dev in step_stats.dev_stats:
                device_type = dev.device.rsplit("/device:", 1)[-1].split(":")[0]
                for ns in dev.node_stats:
                    op_def = ops.get(ns.op_type)
                    if op_def is not None and op_def.is_plumbing:
                        continue  # their times are waiting, not work
                    seconds = max(ns.op_end_rel_micros - ns.op_start_rel_micros, 0) / 1e6
                    key = (ns.node_name, device_type)
                    old = self._seconds.get(key)
                    self._seconds[key] = seconds if old is None else old + _SMOOTHING * (seconds - old)
                    self._bytes[ns.node_name] = ns.output_bytes
            self.steps_observed += 1

    def measured_seconds(self, node_name, device_type="CPU"):
        return self._seconds.get((node_name, device_type))
