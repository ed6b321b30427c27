"""Collectives on numpy arrays, outside any graph: the same negotiation, fusion and algorithms as the ops,
for scripts, tools and benchmarks. Every call is collective (same ``name`` on every rank) and bounded by
``timeout``."""

import threading

import numpy as np

from tensorweave_distributed.reduction import check_op, compression_name
from tensorweave_distributed.world import get_world


def run(kind, arrays, name, op="sum", root=0, algorithm=None, compression="none", timeout=60.0):
    """Results of the ``kind`` collective (allreduce, allgather, broadcast, reduce_scatter) of ``arrays``."""
    from tensorweave_distributed.controller import Request
    world = get_world()
    arrays = [np.asarray(a) for a in arrays]
    if kind in ("allreduce", "reduce_scatter"):
        for a in arrays:
            check_op(op, a.dtype)
    box, finished = [], threading.Event()

    def arrived(error, values):
        box.append((error, values))
        finished.set()

    algorithm = (algorithm or world.settings.algorithm) if kind == "allreduce" else "auto"
    world.collectives.submit([Request(name, kind, arrays, arrived, op, root, algorithm, compression_name(compression))])
    if not finished.wait(timeout):
        raise TimeoutError(f"{kind} {name!r} did not complete within {timeout} s on rank {world.rank}")
    error, values = box[0]
    if error is not None:
        raise error
    return values


def allreduce(array, name, op="sum", **kwargs):
    return run("allreduce", [array], name, op=op, **kwargs)[0]


def allgather(array, name, **kwargs):
    return run("allgather", [array], name, **kwargs)[0]


def broadcast(array, name, root=0, **kwargs):
    return run("broadcast", [array], name, root=root, **kwargs)[0]


def reduce_scatter(array, name, op="sum", **kwargs):
    return run("reduce_scatter", [array], name, op=op, **kwargs)[0]
