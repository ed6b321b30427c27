"""Collectives of this process: requests from kernels, their announcement to the coordinator, and the
batches it sends back, run one after another on the progress engine (so every rank runs them in the same
order, and MPI's own collectives may be among them).

``submit`` is the one entry point (any thread); each request's ``callback(error, result)`` runs on the
MPI thread. A request whose step was cancelled still runs when the other ranks get to it (its result is
dropped), so the ranks never fall out of step with each other.
"""

import collections

from tensorweave import errors
from tensorweave_distributed import algorithms, execute
from tensorweave_distributed.control import HEARTBEAT, NEGOTIATE, RESPOND
from tensorweave_distributed.negotiation import Coordinator, plan_batches

_TAG_STRIDE = 4096


class Request:
    """One op's collective: its tensors travel and are negotiated together; ``callback(error, results)``.

    ``backend`` (optional): the tensors' device's collective backend (NCCL for GPU tensors), with ``name``,
    ``run(batch, groups, comm)`` (a generator like ``execute.run``) and ``to_host(array)``; ``arrays`` are then
    device arrays. It runs the batch when every rank's request names the same backend, else MPI does, on host
    copies."""

    __slots__ = ("name", "kind", "arrays", "op", "root", "algorithm", "compression", "callback", "backend")

    def __init__(self, name, kind, arrays, callback, op="sum", root=0, algorithm="auto", compression="none",
                 backend=None):
        if kind in ("allgather", "reduce_scatter") and any(len(a.shape) == 0 for a in arrays):
            raise ValueError(f"{kind} {name!r} needs arrays of rank >= 1 (they are joined or split along "
                             f"dimension 0); a scalar was given: reshape it to [1]")
        self.name = name
        self.kind = kind
        self.arrays = arrays
        self.op = op
        self.root = root
        self.algorithm = algorithm
        self.compression = compression
        self.callback = callback
        self.backend = backend

    def descriptor(self):
        return (self.kind, tuple((a.dtype.str, a.shape) for a in self.arrays), self.op, self.root, self.algorithm,
                self.compression, self.backend.name if self.backend is not None else "")

    def host_arrays(self):
        """The arrays as MPI sends them (host copies of device arrays)."""
        if self.backend is None:
            return self.arrays
        return [self.backend.to_host(a) for a in self.arrays]


class Controller:
    def __init__(self, world):
        self.world = world
        self.comm = world.coll
        self.rank, self.size = world.rank, world.size
        self.counter = algorithms.Counter()
        self.scratch = algorithms.Scratch()
        self.pool = algorithms.BufferPool()
        self.batches_run = 0
        self.tensors_run = 0
        self._queues = {}
        self._outbox = []
        self._flush_scheduled = False
        self._batches = collections.deque()
        self._running = None  # the sequence number of the batch running now
        self._running_requests = []
        self._sequence = 0
        self._waiting = 0
        self.coordinator = None
        if self.size > 1:
            if self.rank == 0:
                self.coordinator = Coordinator(world, self._respond)
                world.control.on(NEGOTIATE, self.coordinator.announce)
                world.control.on(HEARTBEAT, self.coordinator.stalls.on_heartbeat)  # how busy each rank is
            else:
                world.control.on(RESPOND, self._on_response)
        world.engine.add_busy_check(lambda: self._waiting > 0)
        world.on_failure(self._fail_all)
        world.on_peer_left(self._peer_left)

    # ---- any thread -------------------------------------------------------------------------------
    def submit(self, requests):
        self.world.check()
        self.world.engine.call(self._submit, list(requests))

    # ---- engine thread ----------------------------------------------------------------------------
    def _submit(self, requests):
        error = self._refusal()
        if error is not None:
            for request in requests:
                _call(request.callback, error, None)
            return
        for request in requests:
            self._queues.setdefault(request.name, collections.deque()).append(request)
        self._waiting += len(requests)
        if self.size == 1:
            self._on_response(0, plan_batches([(r.name, [r.descriptor()]) for r in requests], self.world.settings))
            return
        self._outbox.extend((r.name, r.descriptor()) for r in requests)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.world.engine.call(self._flush)  # after the submissions already queued: one announcement

    def _flush(self):
        self._flush_scheduled = False
        descriptors, self._outbox = self._outbox, []
        if not descriptors:
            return
        if self.rank == 0:
            self.coordinator.announce(0, descriptors)
        else:
            self.world.control.send(0, NEGOTIATE, descriptors)

    def _respond(self, batches):
        for rank in range(1, self.size):
            self.world.control.send(rank, RESPOND, batches)
        self._on_response(0, batches)

    def _on_response(self, source, batches):
        self._batches.extend(batches)
        self._run_next()

    def _run_next(self):
        while self._running is None and self._batches:
            batch = self._batches.popleft()
            requests = []
            for name in batch.names:
                queue = self._queues.get(name)
                if not queue and batch.error is not None:
                    continue  # an error about a collective this rank has not submitted (yet)
                if not queue:
                    self.world.fail(errors.InternalError(None, None, (
                        f"rank {self.rank} was told to run collective {name!r}, which it never submitted")))
                    return
                requests.append(queue.popleft())
                if not queue:
                    del self._queues[name]
            if batch.error is not None:
                error_class = errors.UnavailableError if batch.kind == "departed" else errors.InvalidArgumentError
                self._finished(requests, error_class(None, None, batch.error), None, None)
                continue
            sequence = self._running = self._sequence
            self._running_requests = requests
            self._sequence += 1
            self.world.engine.hot += 1
            tag = (sequence % _TAG_STRIDE) * _TAG_STRIDE
            if batch.backend:
                generator = requests[0].backend.run(batch, [r.arrays for r in requests], self.comm)
            else:
                generator = execute.run(batch, [r.host_arrays() for r in requests], self.comm, self.scratch, tag,
                                        self.counter, self.pool)
            self.world.engine.spawn(generator, lambda error, results, rs=requests, b=batch, seq=sequence:
                                    self._finished(rs, _located(error, b), results, seq))

    def _finished(self, requests, error, results, sequence):
        """``sequence``: the batch that ran (None for one failed at negotiation)."""
        if sequence is not None:
            if self._running != sequence:
                return  # abandoned when the job failed; its requests were failed then
            self._running, self._running_requests = None, []
            self.world.engine.hot -= 1
            self.batches_run += 1
            self.tensors_run += sum(len(r.arrays) for r in requests)
        self._waiting -= len(requests)
        for i, request in enumerate(requests):
            _call(request.callback, error, None if error is not None else results[i])
        if sequence is not None:
            self.world.engine.call(self._run_next)

    def _refusal(self):
        world = self.world
        if world.failure is not None:
            return world.failure
        left = sorted(world.control.left)
        if left:
            return _departed(left)
        return None

    def _fail_all(self, error):
        running = self._running_requests
        if self._running is not None:  # its MPI requests may never complete: fail it, stop polling hard
            self._running, self._running_requests = None, []
            self.world.engine.hot -= 1
        queued = running + [r for queue in self._queues.values() for r in queue]
        self._queues.clear()
        self._batches.clear()
        self._outbox = []
        self._waiting = 0
        for request in queued:
            _call(request.callback, error, None)

    def idle(self):
        """Nothing submitted here is waiting or running."""
        return not self._queues and not self._batches and self._running is None and not self._outbox

    def _peer_left(self, rank):
        """Collectives already negotiated went through the departed rank too; the coordinator fails the others
        (or, when the coordinator itself left, this rank fails those it still waits to hear about)."""
        if self.coordinator is not None:
            self.coordinator.peer_left(rank, _departed([rank]))
        elif rank == 0:
            negotiated = {name for batch in self._batches for name in batch.names}
            for name in [n for n in self._queues if n not in negotiated]:
                queue = self._queues.pop(name)
                self._waiting -= len(queue)
                for request in queue:
                    _call(request.callback, _departed([rank]), None)


def _departed(ranks):
    return errors.UnavailableError(None, None, (
        f"rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))} ha{'ve' if len(ranks) > 1 else 's'} shut "
        f"down, and a collective needs every rank. Every rank must run the same collectives; check why "
        f"{'they' if len(ranks) > 1 else 'it'} stopped early."))


def _located(error, batch):
    if error is None or isinstance(error, errors.OpError):
        return error
    return errors.InternalError(None, None, f"{batch.kind} of {', '.join(batch.names)} failed: "
                                            f"{type(error).__name__}: {error}")


def _call(callback, error, result):
    try:
        callback(error, result)
    except Exception:  # a kernel's callback must not break the MPI thread
        import logging
        import traceback
        logging.getLogger("tensorweave_distributed").error("collective callback failed:\n%s", traceback.format_exc())
