"""Kernels of the collective ops, for every device type: asynchronous, they hand host copies of their inputs
to the process's collective controller and complete when the batch carrying them has run on every rank.

The all-reduce algorithm is the op's ``algorithm`` attr if set, else the session's (``twd.ConfigProto(
allreduce_algorithm=...)``), else ``TENSORWEAVE_ALLREDUCE_ALGORITHM`` / ``init(algorithm=)``, else ``auto``.
A cancelled step (deadline, closed session) fails the op at once; the collective itself still runs when the
other ranks reach it, so the ranks stay matched.
"""

import threading

import numpy as np

from tensorweave.extension import KernelSet

from tensorweave_distributed.world import get_world

KERNELS = KernelSet(device_type="*")

_KINDS = {"MpiAllReduce": "allreduce", "MpiAllGather": "allgather", "MpiBroadcast": "broadcast",
          "MpiReduceScatter": "reduce_scatter"}


def _algorithm(attr, config, world):
    return attr or getattr(config, "allreduce_algorithm", None) or world.settings.algorithm


def _build(node):
    attrs = node.attrs
    kind = _KINDS[node.op_type]
    base = attrs.get("collective_name") or node.name
    op = attrs.get("reduction", "sum")
    root = attrs.get("root_rank", 0)
    compression = attrs.get("compression", "none")
    algorithm_attr = attrs.get("algorithm", "")
    config = node.session_config
    device = node.device

    def compute(ctx, done, *inputs):
        from tensorweave_distributed.controller import Request
        world = get_world()
        world.check()
        if kind == "broadcast" and not 0 <= root < world.size:
            raise ValueError(f"root_rank {root} is not a rank of this job (ranks 0..{world.size - 1})")
        name = base if not ctx.frame_id else f"{base}@{ctx.frame_id}:{ctx.iteration}"
        arrays = [np.asarray(device.to_host(x)) for x in inputs]
        algorithm = _algorithm(algorithm_attr, config, world) if kind == "allreduce" else "auto"
        results = [None] * len(arrays)
        state = {"left": len(arrays), "finished": False}
        lock = threading.Lock()
        token = [None]

        def finish(result):
            with lock:
                if state["finished"]:
                    return
                state["finished"] = True
            if token[0] is not None:
                ctx.cancellation.deregister(token[0])
            done(result)

        def arrived(index):
            def callback(error, value):
                if error is not None:
                    finish(error)
                    return
                results[index] = device.from_host(value)
                with lock:
                    state["left"] -= 1
                    last = state["left"] == 0
                if last:
                    finish(results)
            return callback

        token[0] = ctx.cancellation.register(finish)
        if token[0] is None:
            done(ctx.cancelled_error())
            return
        names = [name] if len(arrays) == 1 else [f"{name}/{i}" for i in range(len(arrays))]
        try:
            world.collectives.submit([Request(n, kind, a, arrived(i), op, root, algorithm, compression)
                                      for i, (n, a) in enumerate(zip(names, arrays))])
        except Exception as e:
            finish(e)

    return compute


for _op_type in _KINDS:
    KERNELS.add(_op_type, build=_build, asynchronous=True)
