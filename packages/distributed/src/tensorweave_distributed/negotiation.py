"""The coordinator (rank 0): which collectives every rank has submitted, in which order they run, and which
of them travel fused.

Ranks submit collectives by name (the op's name, with the loop frame and iteration inside while loops)
in whatever order their steps reach them, and announce them to rank 0. A name becomes ready once every
rank has announced it; the n-th submission of a name on one rank meets the n-th on the others. Rank 0
checks that the ranks agree (kind, dtype, shape, op, root, algorithm, compression; an error names the
ranks that differ), then sends every rank the same list of batches, which each rank runs in that order:
consecutive ready all-reduces with the same dtype, op and options are fused into one buffer up to the
fusion threshold, and so are broadcasts from the same root. ``auto`` all-reduces get their algorithm
here, from the fused size, so every rank uses the same one.

A name some ranks submitted and others did not is a stall: ``stall.StallCheck`` warns about it, and fails
the job once its missing ranks have been idle for ``stall_timeout``.
"""

import collections
import functools
import math
import time

import numpy as np

from tensorweave_distributed.algorithms import split_bounds
from tensorweave_distributed.execute import Batch
from tensorweave_distributed.reduction import wire_dtype
from tensorweave_distributed.stall import StallCheck

_FIELDS = ("kind", "tensors", "op", "root rank", "algorithm", "compression")


def choose_algorithm(nbytes, settings):
    """``auto``: recursive doubling for small buffers (fewest rounds), the ring for large ones (least
    traffic), MPI's own in between."""
    if nbytes < settings.small_bytes:
        return "recursive_doubling"
    if nbytes >= settings.large_bytes:
        return "ring"
    return "native"


def check_agreement(name, descriptors):
    """None when every rank's descriptor of ``name`` agrees, else a message naming the ranks that differ.

    A descriptor is (kind, ((dtype, shape) of each tensor), op, root, algorithm, compression)."""
    first = descriptors[0]
    for index, field in enumerate(_FIELDS):
        values = [d[index] for d in descriptors]
        if field == "tensors":
            problem = _tensor_disagreement(first[0], values)
            if problem is not None:
                what, values = problem
            else:
                continue
        else:
            what = field
        if any(v != values[0] for v in values):
            by_rank = ", ".join(f"rank {r}: {v}" for r, v in enumerate(values))
            return (f"collective {name!r}: the ranks disagree on its {what} ({by_rank}). Every rank must build the "
                    f"same collective ops, in tensors of the same dtype and shape"
                    + (" (all_gather allows different first dimensions)" if first[0] == "allgather" else "") + ".")
    return None


def _tensor_disagreement(kind, members_by_rank):
    counts = [len(m) for m in members_by_rank]
    if any(c != counts[0] for c in counts):
        return "number of tensors", counts
    first = members_by_rank[0]
    if kind != "allgather" and all(m == first for m in members_by_rank):
        return None  # the usual case, decided without looking at each tensor
    for i in range(counts[0]):
        dtypes = [np.dtype(m[i][0]).name for m in members_by_rank]
        if any(d != dtypes[0] for d in dtypes):
            return _member("dtype", i, counts[0]), dtypes
        if kind == "allgather":
            shapes = [list(m[i][1][1:]) for m in members_by_rank]
            what = "shape after the first dimension"
        else:
            shapes = [list(m[i][1]) for m in members_by_rank]
            what = "shape"
        if any(sh != shapes[0] for sh in shapes):
            return _member(what, i, counts[0]), shapes
    return None


def _member(what, index, count):
    return what if count == 1 else f"{what} of tensor {index}"


@functools.lru_cache(maxsize=256)
def _wire_itemsize(dtype, compression):
    return wire_dtype(dtype, compression).itemsize


def common_backend(descriptors):
    """The device backend every rank asked for (a descriptor's optional 7th field), else "" (MPI on host copies)."""
    backends = {d[6] if len(d) > 6 else "" for d in descriptors}
    return backends.pop() if len(backends) == 1 else ""


def plan_batches(ready, settings):
    """Batches, in order, for ``ready``: [(name, [descriptor of each rank])]."""
    batches, sizes, current_key = [], [], None
    for name, descriptors in ready:
        error = check_agreement(name, descriptors)
        kind, members, op, root, algorithm, compression = descriptors[0][:6]
        backend = common_backend(descriptors)
        if error is not None or kind in ("allgather", "reduce_scatter"):
            extras = None
            if error is None and kind == "allgather":  # each rank's rows
                extras = [[d[1][i][1][0] if d[1][i][1] else 1 for d in descriptors] for i in range(len(members))]
            elif error is None:  # the row blocks of a reduce-scatter, one split for every backend
                extras = [split_bounds(shape[0], len(descriptors)) for _, shape in members]
            batches.append(Batch(kind, [name], op=op, compression=compression, extras=extras, error=error,
                                 backend=backend))
            sizes.append(0)
            current_key = None
            continue
        nbytes = sum(math.prod(shape) * _wire_itemsize(dtype, compression) for dtype, shape in members)
        key = (kind, root, backend) if kind == "broadcast" else (kind, op, algorithm, compression, backend)
        threshold = settings.fusion_threshold
        if key == current_key and threshold and sizes[-1] + nbytes <= threshold:
            batches[-1].names.append(name)
            sizes[-1] += nbytes
            continue
        batches.append(Batch(kind, [name], algorithm, op, root, compression, backend=backend))
        sizes.append(nbytes)
        current_key = key
    for batch, nbytes in zip(batches, sizes):
        if batch.kind == "allreduce" and batch.algorithm == "auto":
            batch.algorithm = choose_algorithm(nbytes, settings)
    return batches


class Coordinator:
    def __init__(self, world, respond, clock=time.monotonic):
        self.world = world
        self.size = world.size
        self.settings = world.settings
        self._respond = respond
        self._pending = {}
        self._since = {}  # name -> when its oldest unmatched submission arrived
        self._departure = None
        self.stalls = StallCheck(world, self.waiting, clock)
        world.engine.add_periodic(self.stalls.period, self.stalls.check)

    def peer_left(self, rank, error):
        """A rank shut down: what it has not submitted never will be, so every pending collective fails."""
        self._departure = str(error)
        names = list(self._pending)
        self._pending.clear()
        self._since.clear()
        if names:
            self._respond([Batch("departed", [name], error=self._departure) for name in names])

    def announce(self, source, descriptors):
        """Rank ``source`` submitted ``descriptors`` ([(name, descriptor)]): respond with what became ready."""
        if self._departure is not None:
            self._respond([Batch("departed", [name], error=self._departure) for name, _ in descriptors])
            return
        ready = []
        now = self.stalls.clock()
        for name, descriptor in descriptors:
            queues = self._pending.get(name)
            if queues is None:
                queues = self._pending[name] = [collections.deque() for _ in range(self.size)]
                self._since[name] = now
            queues[source].append(descriptor)
            while all(queues):
                ready.append((name, [q.popleft() for q in queues]))
                self._since[name] = now
            if not any(queues):
                del self._pending[name]
                del self._since[name]
        if ready:
            self._respond(plan_batches(ready, self.settings))

    def pending(self):
        """{name: ranks that submitted it} for collectives not every rank has submitted yet."""
        return {name: [r for r, q in enumerate(queues) if q] for name, queues in self._pending.items()}

    def waiting(self, now):
        """[(name, seconds waited, ranks that submitted it, ranks that have not)], longest wait first."""
        entries = []
        for name, queues in self._pending.items():
            have = [r for r, q in enumerate(queues) if q]
            entries.append((name, now - self._since[name], have, [r for r in range(self.size) if not queues[r]]))
        return sorted(entries, key=lambda entry: -entry[1])
