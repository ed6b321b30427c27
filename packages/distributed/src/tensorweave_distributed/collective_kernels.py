"""Kernels of the collective ops, for every device type: asynchronous, they hand host copies of their inputs
to the process's collective controller and complete when the batch carrying them has run on every rank.
Tensors on a device that offers a collective backend (NCCL on GPUs) stay on it and travel by that backend.

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


def device_backend(device, kind, inputs, op, compression):
    """The device's own collective backend (``device.collective_backend()``: NCCL for GPU tensors) when it can
    carry this collective, else None: the tensors go to the host and through MPI."""
    provider = getattr(device, "collective_backend", None)
    backend = provider() if provider is not None else None
    if backend is None or not backend.supports(kind, inputs, op, compression):
        return None
    return backend


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
        backend = device_backend(device, kind, inputs, op, compression)
        arrays = list(inputs) if backend is not None else [np.asarray(device.to_host(x)) for x in inputs]
        algorithm = _algorithm(algorithm_attr, config, world) if kind == "allreduce" else "auto"
        finished = [False]
        lock = threading.Lock()
        token = [None]

        def finish(result):
            with lock:
                if finished[0]:
                    return
                finished[0] = True
            if token[0] is not None:
                ctx.cancellation.deregister(token[0])
            done(result)

        def arrived(error, values):
            finish(error if error is not None else [device.from_host(v) if isinstance(v, np.ndarray) else v
                                                    for v in values])

        token[0] = ctx.cancellation.register(finish)
        if token[0] is None:
            done(ctx.cancelled_error())
            return
        try:
            world.collectives.submit([Request(name, kind, arrays, arrived, op, root, algorithm, compression, backend)])
        except Exception as e:
            finish(e)

    return compute


for _op_type in _KINDS:
    KERNELS.add(_op_type, build=_build, asynchronous=True)
