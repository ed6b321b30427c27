"""Collects per-op step statistics while a traced step runs."""

import threading
import time

from tensorweave.runtime.config import DeviceStepStats, NodeExecStats

_EPOCH_OFFSET = time.time() - time.perf_counter()


class StepStatsCollector:
    def __init__(self):
        self._lock = threading.Lock()
        self._by_device = {}

    def record(self, node, device, start, end, thread, outputs):
        nbytes = 0
        for v in outputs or ():
            nbytes += getattr(v, "nbytes", 0) or 0
        start_us = int((start + _EPOCH_OFFSET) * 1e6)
        end_us = int((end + _EPOCH_OFFSET) * 1e6)
        stats = NodeExecStats(node.name, node.op_type, start_us, end_us, thread, nbytes,
                              f"{node.name} = {node.op_type}()")
        with self._lock:
            self._by_device.setdefault(device, []).append(stats)

    def fill(self, step_stats):
        with self._lock:
            for device, nodes in sorted(self._by_device.items()):
                dev = DeviceStepStats(device)
                dev.node_stats = sorted(nodes, key=lambda s: s.all_start_micros)
                step_stats.dev_stats.append(dev)
