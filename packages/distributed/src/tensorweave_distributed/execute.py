"""Running one negotiated batch: pack the tensors into one buffer per dtype (tensor fusion), run the
algorithm, and hand each request its results (views of the fused result, so unpacking copies nothing).

A batch is the coordinator's decision, the same on every rank: its kind, the requests (names) it carries,
the algorithm, and what ranks need to know about each other (the first dimensions of an all-gather).
A request is a group of tensors (all the inputs of one op), negotiated as one.
"""

import numpy as np

from tensorweave_distributed import algorithms
from tensorweave_distributed.reduction import finish_mean, from_wire, mpi_op, reducer, to_wire, wire_dtype


class Batch:
    """``backend``: the name of the device backend (e.g. NCCL) every rank's requests asked for, or "" for MPI."""

    __slots__ = ("kind", "names", "algorithm", "op", "root", "compression", "extras", "error", "backend")

    def __init__(self, kind, names, algorithm="", op="", root=0, compression="none", extras=None, error=None,
                 backend=""):
        self.kind = kind
        self.names = names
        self.algorithm = algorithm
        self.op = op
        self.root = root
        self.compression = compression
        self.extras = extras
        self.error = error
        self.backend = backend

    def __getstate__(self):
        return tuple(getattr(self, s) for s in self.__slots__)

    def __setstate__(self, state):
        for slot, value in zip(self.__slots__, state):
            setattr(self, slot, value)


def run(batch, groups, comm, scratch, tag, counter, pool):
    """Generator for the engine: ``groups`` holds each request's arrays; returns each request's results.
    ``pool`` lends the result buffers (``algorithms.BufferPool``), ``scratch`` the receive buffer."""
    arrays = [a for group in groups for a in group]
    kind = batch.kind
    if kind == "allreduce":
        flat = yield from _allreduce(batch, arrays, comm, scratch, tag, counter, pool)
    elif kind == "broadcast":
        flat = yield from _broadcast(batch, arrays, comm, pool)
    elif kind == "allgather":
        flat = yield from _all_gather(arrays, batch.extras, comm, pool)
    elif kind == "reduce_scatter":
        flat = yield from _reduce_scatter(batch, arrays, comm, scratch, tag, counter, pool)
    else:
        raise ValueError(f"unknown collective kind {kind!r}")
    results, start = [], 0
    for group in groups:
        results.append(flat[start:start + len(group)])
        start += len(group)
    return results


def _allreduce(batch, arrays, comm, scratch, tag, counter, pool):
    """One fused buffer per dtype (in order of first appearance), each reduced by the batch's algorithm."""
    by_dtype = {}
    for index, array in enumerate(arrays):
        by_dtype.setdefault(array.dtype, []).append(index)
    results = [None] * len(arrays)
    for dtype, indices in by_dtype.items():
        wire = wire_dtype(dtype, batch.compression)
        members = [arrays[i] for i in indices]
        offsets = np.concatenate([[0], np.cumsum([a.size for a in members])]).astype(np.int64)
        buf = pool.empty(int(offsets[-1]), wire)
        if wire == dtype and len(members) > 1:
            np.concatenate([a.reshape(-1) for a in members], out=buf)
        else:
            for array, start, end in zip(members, offsets[:-1], offsets[1:]):
                to_wire(array, buf[start:end], batch.compression)
        algorithm, op = batch.algorithm, mpi_op(batch.op, wire, batch.compression)
        if algorithm == "native" and op is None:
            algorithm = "ring"
        yield from algorithms.allreduce(algorithm, comm, buf, reducer(batch.op, wire, batch.compression), op, scratch,
                                        tag, counter)
        values = from_wire(buf, dtype, batch.compression)
        if batch.op == "mean":
            finish_mean(values, comm.Get_size())
        for i, array, start, end in zip(indices, members, offsets[:-1], offsets[1:]):
            results[i] = values[start:end].reshape(array.shape)
    return results


def _broadcast(batch, arrays, comm, pool):
    offsets = np.concatenate([[0], np.cumsum([a.nbytes for a in arrays])]).astype(np.int64)
    buf = pool.empty(int(offsets[-1]), np.uint8)
    if comm.Get_rank() == batch.root:
        for array, start, end in zip(arrays, offsets[:-1], offsets[1:]):
            buf[start:end] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    yield from algorithms.native_broadcast(comm, buf, batch.root)
    return [buf[start:end].view(a.dtype).reshape(a.shape) for a, start, end in zip(arrays, offsets[:-1], offsets[1:])]


def _all_gather(arrays, first_dims_of, comm, pool):
    results = []
    for array, first_dims in zip(arrays, first_dims_of):
        row = int(np.prod(array.shape[1:], dtype=np.int64))
        rows = sum(first_dims)
        out = pool.empty(rows * row, array.dtype).reshape((rows,) + array.shape[1:])
        if comm.Get_size() == 1:
            out[...] = array
        else:
            yield from algorithms.native_all_gather(comm, np.ascontiguousarray(array), out,
                                                    [d * row * array.dtype.itemsize for d in first_dims])
        results.append(out)
    return results


def _reduce_scatter(batch, arrays, comm, scratch, tag, counter, pool):
    size, rank = comm.Get_size(), comm.Get_rank()
    results = []
    for array, row_bounds in zip(arrays, batch.extras):
        wire = wire_dtype(array.dtype, batch.compression)
        row = int(np.prod(array.shape[1:], dtype=np.int64))
        buf = pool.empty(array.size, wire)
        to_wire(array, buf, batch.compression)
        bounds = [b * row for b in row_bounds]
        yield from algorithms.ring_reduce_scatter(comm, buf, reducer(batch.op, wire, batch.compression), scratch,
                                                  tag, bounds, counter)
        mine = from_wire(buf[bounds[rank]:bounds[rank + 1]], array.dtype, batch.compression)
        if batch.op == "mean":
            finish_mean(mine, size)
        results.append(mine.reshape((row_bounds[rank + 1] - row_bounds[rank],) + array.shape[1:]))
    return results
