"""Collective algorithms over MPI point-to-point messages, as generators for the progress engine.

Each generator works in place on a 1-D contiguous numpy buffer and yields the list of MPI requests it
must wait for before going on (``engine.spawn`` drives it; ``run_blocking`` drives it without an engine,
for benchmarks). ``combine(into, other)`` is the elementwise reduction; ``scratch(count, dtype)`` lends a
reusable receive buffer (fresh memory for every call would cost page faults on large messages).

- Ring (Patarasuk and Yuan): a reduce-scatter then an all-gather around the ring; each rank sends
  2(N-1)/N of the data, the minimum any algorithm needs, so it is the one for large buffers.
- Recursive doubling: log2(N) exchanges of the whole buffer, the fewest rounds, for small ones. A
  non-power-of-two N first folds the extra ranks into their neighbours and unfolds them at the end.
- Native: MPI's own non-blocking collectives.

Every rank ends with bitwise the same values: the ring reduces each segment once and hands it around,
and the doubling's partners compute a op b and b op a, which IEEE arithmetic makes equal.
"""

import sys

import numpy as np
from mpi4py import MPI


def split_bounds(count, parts):
    """Boundaries of ``parts`` near-equal pieces of ``count`` (the first ``count % parts`` one longer)."""
    base, extra = divmod(count, parts)
    bounds = [0]
    for i in range(parts):
        bounds.append(bounds[-1] + base + (1 if i < extra else 0))
    return bounds


class Counter:
    """Bytes this rank posted to send, by algorithm (for tests and the benchmark)."""

    def __init__(self):
        self.bytes = {}

    def add(self, algorithm, nbytes):
        self.bytes[algorithm] = self.bytes.get(algorithm, 0) + nbytes


def _send(comm, array, dest, tag, counter, algorithm):
    if counter is not None:
        counter.add(algorithm, array.nbytes)
    return comm.Isend([array, MPI.BYTE], dest, tag)


def ring_reduce_scatter(comm, buf, combine, scratch, tag=0, bounds=None, counter=None):
    """Leaves segment ``rank`` of ``bounds`` (default: near-equal) reduced over every rank."""
    size, rank = comm.Get_size(), comm.Get_rank()
    if size == 1:
        return
    bounds = bounds or split_bounds(buf.size, size)
    right, left = (rank + 1) % size, (rank - 1) % size
    longest = max(bounds[i + 1] - bounds[i] for i in range(size))
    tmp = scratch(longest, buf.dtype)
    for step in range(size - 1):
        out_seg, in_seg = (rank - step - 1) % size, (rank - step - 2) % size
        send = buf[bounds[out_seg]:bounds[out_seg + 1]]
        into = buf[bounds[in_seg]:bounds[in_seg + 1]]
        incoming = tmp[:into.size]
        requests = []
        if send.size:
            requests.append(_send(comm, send, right, tag + step, counter, "ring"))
        if into.size:
            requests.append(comm.Irecv([incoming, MPI.BYTE], left, tag + step))
        yield requests
        if into.size:
            combine(into, incoming)


def ring_all_gather(comm, buf, tag=0, bounds=None, counter=None):
    """From segment ``rank`` on each rank to every segment on every rank."""
    size, rank = comm.Get_size(), comm.Get_rank()
    if size == 1:
        return
    bounds = bounds or split_bounds(buf.size, size)
    right, left = (rank + 1) % size, (rank - 1) % size
    for step in range(size - 1):
        out_seg, in_seg = (rank - step) % size, (rank - step - 1) % size
        send = buf[bounds[out_seg]:bounds[out_seg + 1]]
        into = buf[bounds[in_seg]:bounds[in_seg + 1]]
        requests = []
        if send.size:
            requests.append(_send(comm, send, right, tag + size + step, counter, "ring"))
        if into.size:
            requests.append(comm.Irecv([into, MPI.BYTE], left, tag + size + step))
        yield requests


def ring_allreduce(comm, buf, combine, scratch, tag=0, counter=None):
    yield from ring_reduce_scatter(comm, buf, combine, scratch, tag, None, counter)
    yield from ring_all_gather(comm, buf, tag, None, counter)


def recursive_doubling_allreduce(comm, buf, combine, scratch, tag=0, counter=None):
    size, rank = comm.Get_size(), comm.Get_rank()
    if size == 1 or buf.size == 0:
        return
    power = 1 << (size.bit_length() - 1)
    extra = size - power
    tmp = scratch(buf.size, buf.dtype)
    if rank < 2 * extra:
        if rank % 2 == 0:
            yield [_send(comm, buf, rank + 1, tag, counter, "recursive_doubling")]
            virtual = -1
        else:
            yield [comm.Irecv([tmp, MPI.BYTE], rank - 1, tag)]
            combine(buf, tmp)
            virtual = rank // 2
    else:
        virtual = rank - extra
    if virtual >= 0:
        mask, round_ = 1, 1
        while mask < power:
            partner_virtual = virtual ^ mask
            partner = partner_virtual * 2 + 1 if partner_virtual < extra else partner_virtual + extra
            yield [_send(comm, buf, partner, tag + round_, counter, "recursive_doubling"),
                   comm.Irecv([tmp, MPI.BYTE], partner, tag + round_)]
            combine(buf, tmp)
            mask <<= 1
            round_ += 1
    if rank < 2 * extra:
        last = tag + 63
        if rank % 2 == 0:
            yield [comm.Irecv([buf, MPI.BYTE], rank + 1, last)]
        else:
            yield [_send(comm, buf, rank - 1, last, counter, "recursive_doubling")]


def native_allreduce(comm, buf, op, counter=None):
    if comm.Get_size() > 1 and buf.size:
        if counter is not None:
            counter.add("native", buf.nbytes)
        yield [comm.Iallreduce(MPI.IN_PLACE, buf, op)]


def native_all_gather(comm, send, recv, byte_counts):
    """``recv`` (bytes of every rank, in rank order) from each rank's ``send``."""
    displacements = np.concatenate([[0], np.cumsum(byte_counts)[:-1]]).astype(np.int64).tolist()
    yield [comm.Iallgatherv([send.reshape(-1).view(np.uint8), MPI.BYTE],
                            [recv.reshape(-1).view(np.uint8), (list(byte_counts), displacements), MPI.BYTE])]


def native_broadcast(comm, buf, root):
    if comm.Get_size() > 1 and buf.size:
        yield [comm.Ibcast([buf.reshape(-1).view(np.uint8), MPI.BYTE], root)]


def allreduce(algorithm, comm, buf, combine, op, scratch, tag=0, counter=None):
    """The generator of ``algorithm`` (ring, recursive_doubling or native) on ``buf``."""
    if algorithm == "ring":
        return ring_allreduce(comm, buf, combine, scratch, tag, counter)
    if algorithm == "recursive_doubling":
        return recursive_doubling_allreduce(comm, buf, combine, scratch, tag, counter)
    if algorithm == "native":
        return native_allreduce(comm, buf, op, counter)
    raise ValueError(f"unknown all-reduce algorithm {algorithm!r}")


class BufferPool:
    """Result buffers reused once nothing holds them any more (no view of them is alive), so steady training
    steps touch no fresh memory: a fresh large array costs page faults, and numpy asks for huge pages,
    whose compaction can stall a first touch for tens of milliseconds."""

    def __init__(self, per_size=4):
        self._free = {}
        self._per_size = per_size

    def empty(self, count, dtype):
        dtype = np.dtype(dtype)
        nbytes = count * dtype.itemsize
        if nbytes < 64 * 1024:
            return np.empty(count, dtype)
        buffers = self._free.setdefault(nbytes, [])
        for buffer in buffers:
            if sys.getrefcount(buffer) <= 3:  # the list, this loop and getrefcount: nobody else
                return buffer.view(dtype)
        buffer = np.empty(nbytes, np.uint8)
        if len(buffers) < self._per_size:
            buffers.append(buffer)
        return buffer.view(dtype)


class Scratch:
    """One grow-only receive buffer, lent to one algorithm at a time."""

    def __init__(self):
        self._buffer = np.empty(0, np.uint8)

    def __call__(self, count, dtype):
        dtype = np.dtype(dtype)
        nbytes = count * dtype.itemsize
        if self._buffer.nbytes < nbytes:
            self._buffer = np.empty(max(nbytes, 2 * self._buffer.nbytes), np.uint8)
        return self._buffer[:nbytes].view(dtype)


POLLS_BEFORE_YIELD = 32  # a rank that polls in vain gives its core away now and then (ranks may share cores)


def run_blocking(generator, timeout=None):
    """Drives an algorithm generator on the calling thread (busy polling), for benchmarks and tools."""
    import os
    import time
    deadline = None if timeout is None else time.monotonic() + timeout
    for requests in generator:
        polls = 0
        while requests and not MPI.Request.Testall(requests):
            polls += 1
            if polls % POLLS_BEFORE_YIELD == 0:
                os.sched_yield()
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError("a collective did not finish in time")
