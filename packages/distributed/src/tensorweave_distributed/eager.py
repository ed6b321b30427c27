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
    results = [None] * len(arrays)
    left = [len(arrays)]
    errors_seen = []
    finished = threading.Event()
    lock = threading.Lock()

    def arrived(index):
        def callback(error, value):
            with lock:
                if error is not None:
                    errors_seen.append(error)
                    finished.set()
                    return
                results[index] = value
                left[0] -= 1
                if left[0] == 0:
                    finished.set()
        return callback

    names = [name] if len(arrays) == 1 else [f"{name}/{i}" for i in range(len(arrays))]
    algorithm = (algorithm or world.settings.algorithm) if kind == "allreduce" else "auto"
    world.collectives.submit([Request(n, kind, a, arrived(i), op, root, algorithm, compression_name(compression))
                              for i, (n, a) in enumerate(zip(names, arrays))])
    if not arrays:
        return []
    if not finished.wait(timeout):
        raise TimeoutError(f"{kind} {name!r} did not complete within {timeout} s on rank {world.rank}")
    if errors_seen:
        raise errors_seen[0]
    return results


def allreduce(array, name, op="sum", **kwargs):
    return run("allreduce", [array], name, op=op, **kwargs)[0]


def allgather(array, name, **kwargs):
    return run("allgather", [array], name, **kwargs)[0]


def broadcast(array, name, root=0, **kwargs):
    return run("broadcast", [array], name, root=root, **kwargs)[0]


def reduce_scatter(array, name, op="sum", **kwargs):
    return run("reduce_scatter", [array], name, op=op, **kwargs)[0]
