"""Collects per-op step statistics while a traced step runs (``RunOptions(trace_level=...)``).

Each op gets its start and end, thread, device and output sizes, and TF's timeline label
``name = Op(inputs)``; Sends and Recvs name their tensor and peer device (``_Send(x:0 @/job:...)``)
so a timeline can draw the transfer between them.
"""

import threading
import time

from tensorweave.runtime.config import DeviceStepStats, NodeExecStats, NodeOutput

_EPOCH_OFFSET = time.time() - time.perf_counter()


def timeline_label(node):
    if node.op_type == "_Send":
        return f"{node.name} = _Send({node.attrs['tensor_name']} @{node.attrs['recv_device']})"
    if node.op_type == "_Recv":
        return f"{node.name} = _Recv({node.attrs['tensor_name']} @{node.attrs['send_device']})"
    inputs = [f"{s.name}:{i}" if i else s.name for s, i in node.inputs] + [f"^{c.name}" for c in node.control_inputs]
    return f"{node.name} = {node.op_type}({', '.join(inputs)})"


class StepStatsCollector:
    def __init__(self):
        self._lock = threading.Lock()
        self._by_device = {}
        self._threads = {}

    def record(self, node, device, start, end, thread, outputs):
        described = []
        nbytes = 0
        for slot, v in enumerate(outputs or ()):
            size = getattr(v, "nbytes", 0) or 0
            nbytes += size
            described.append(NodeOutput(slot, getattr(getattr(v, "dtype", None), "name", type(v).__name__),
                                        list(getattr(v, "shape", ())), size))
        start_us = int((start + _EPOCH_OFFSET) * 1e6)
        end_us = int((end + _EPOCH_OFFSET) * 1e6)
        stats = NodeExecStats(node.name, node.op_type, start_us, end_us, thread, nbytes, timeline_label(node),
                              described)
        with self._lock:
            self._by_device.setdefault(device, []).append(stats)
            if thread not in self._threads:
                self._threads[thread] = _thread_name(thread)

    def fill(self, step_stats):
        with self._lock:
            for device, nodes in sorted(self._by_device.items()):
                dev = DeviceStepStats(device)
                dev.node_stats = sorted(nodes, key=lambda s: s.all_start_micros)
                dev.thread_names = {t: self._threads[t] for t in {s.thread_id for s in nodes}}
                step_stats.dev_stats.append(dev)


def _thread_name(ident):
    for t in threading.enumerate():
        if t.ident == ident:
            return t.name
    return f"thread {ident}"
