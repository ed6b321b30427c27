"""Running one negotiated batch: pack the tensors into one buffer (tensor fusion), run the algorithm, and
hand each request its result (views of the fused result, so unpacking copies nothing).

A batch is the coordinator's decision, the same on every rank: its kind, the names it carries, the
algorithm, and what ranks need to know about each other (the first dimensions of an all-gather).
"""

import numpy as np

from tensorweave_distributed import algorithms
from tensorweave_distributed.reduction import finish_mean, from_wire, mpi_op, reducer, to_wire, wire_dtype


class Batch:
    __slots__ = ("kind", "names", "algorithm", "dtype", "op", "root", "compression", "extras", "error")

    def __init__(self, kind, names, algorithm="", dtype="", op="", root=0, compression="none", extras=None,
                 error=None):
        self.kind = kind
        self.names = names
        self.algorithm = algorithm
        self.dtype = dtype
        self.op = op
        self.root = root
        self.compression = compression
        self.extras = extras
        self.error = error

    def __getstate__(self):
        return tuple(getattr(self, s) for s in self.__slots__)

    def __setstate__(self, state):
        for slot, value in zip(self.__slots__, state):
            setattr(self, slot, value)


def run(batch, arrays, comm, scratch, tag, counter):
    """Generator for the engine; returns the result arrays, in the order of ``arrays``."""
    kind = batch.kind
    if kind == "allreduce":
        return (yield from _allreduce(batch, arrays, comm, scratch, tag, counter))
    if kind == "broadcast":
        return (yield from _broadcast(batch, arrays, comm))
    if kind == "allgather":
        return (yield from _all_gather(batch, arrays, comm))
    if kind == "reduce_scatter":
        return (yield from _reduce_scatter(batch, arrays, comm, scratch, tag, counter))
    raise ValueError(f"unknown collective kind {kind!r}")


def _allreduce(batch, arrays, comm, scratch, tag, counter):
    dtype = np.dtype(batch.dtype)
    wire = wire_dtype(dtype, batch.compression)
    sizes = [a.size for a in arrays]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    buf = np.empty(int(offsets[-1]), wire)
    for array, start, end in zip(arrays, offsets[:-1], offsets[1:]):
        to_wire(array, buf[start:end], batch.compression)
    combine = reducer(batch.op, wire, batch.compression)
    algorithm = batch.algorithm
    op = mpi_op(batch.op, wire, batch.compression)
    if algorithm == "native" and op is None:
        algorithm = "ring"
    yield from algorithms.allreduce(algorithm, comm, buf, combine, op, scratch, tag, counter)
    values = from_wire(buf, dtype, batch.compression)
    if batch.op == "mean":
        finish_mean(values, comm.Get_size())
    return [values[start:end].reshape(array.shape) for array, start, end in zip(arrays, offsets[:-1], offsets[1:])]


def _broadcast(batch, arrays, comm):
    nbytes = [a.nbytes for a in arrays]
    offsets = np.concatenate([[0], np.cumsum(nbytes)]).astype(np.int64)
    buf = np.empty(int(offsets[-1]), np.uint8)
    if comm.Get_rank() == batch.root:
        for array, start, end in zip(arrays, offsets[:-1], offsets[1:]):
            buf[start:end] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    yield from algorithms.native_broadcast(comm, buf, batch.root)
    return [buf[start:end].view(a.dtype).reshape(a.shape) for a, start, end in zip(arrays, offsets[:-1], offsets[1:])]


def _all_gather(batch, arrays, comm):
    results = []
    for array, first_dims in zip(arrays, batch.extras):
        row = int(np.prod(array.shape[1:], dtype=np.int64)) * array.dtype.itemsize
        out = np.empty((sum(first_dims),) + array.shape[1:], array.dtype)
        if comm.Get_size() == 1:
            out[...] = array
        else:
            yield from algorithms.native_all_gather(comm, np.ascontiguousarray(array), out,
                                                    [d * row for d in first_dims])
        results.append(out)
    return results


def _reduce_scatter(batch, arrays, comm, scratch, tag, counter):
    size, rank = comm.Get_size(), comm.Get_rank()
    results = []
    for array in arrays:
        dtype = np.dtype(batch.dtype)
        wire = wire_dtype(dtype, batch.compression)
        row_bounds = algorithms.split_bounds(array.shape[0], size)
        row = int(np.prod(array.shape[1:], dtype=np.int64))
        buf = np.empty(array.size, wire)
        to_wire(array, buf, batch.compression)
        bounds = [b * row for b in row_bounds]
        yield from algorithms.ring_reduce_scatter(comm, buf, reducer(batch.op, wire, batch.compression), scratch,
                                                  tag, bounds, counter)
        mine = from_wire(buf[bounds[rank]:bounds[rank + 1]], dtype, batch.compression)
        if batch.op == "mean":
            finish_mean(mine, size)
        results.append(mine.reshape((row_bounds[rank + 1] - row_bounds[rank],) + array.shape[1:]))
    return results
