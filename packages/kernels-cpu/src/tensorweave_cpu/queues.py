"""Queue resources: bounded buffers of tuples of arrays, shared by the steps that run at the same time.

Blocking works by attempts, as in TF's QueueBase: an enqueue or dequeue that cannot finish at once
waits in a first-come list and is retried whenever the queue changes, and it reports through a
callback, so a blocked op holds no thread. A dequeue of n takes elements as they arrive and puts them
back if it fails. Cancelling the step (a closed session, a deadline) fails the step's waiting
attempts with the step's error.
"""

import collections
import heapq
import itertools
import threading

import numpy as np

from tensorweave.extension import Resource, errors

UNBOUNDED = 2**31 - 1


class _Attempt:
    """One waiting enqueue or dequeue: what it still needs and how to report."""

    __slots__ = ("elements", "position", "wanted", "taken", "mode", "done", "cancellation", "token")

    def __init__(self, done, cancellation, elements=None, wanted=0, mode="one"):
        self.done = done
        self.cancellation = cancellation
        self.elements = elements
        self.position = 0
        self.wanted = wanted
        self.taken = []
        self.mode = mode
        self.token = None


class Queue(Resource):
    """The first-in first-out queue; subclasses change the storage order and how batches are made."""

    kind = "FIFOQueue"

    def __init__(self, name, dtypes, shapes, capacity):
        self.name = name
        self.dtypes = [np.dtype(d) for d in dtypes]
        self.shapes = [None if s is None else tuple(s) for s in shapes] if shapes else [None] * len(dtypes)
        self.capacity = UNBOUNDED if capacity < 0 else capacity
        self._lock = threading.Lock()
        self._closed = False
        self._enqueuers = collections.deque()
        self._dequeuers = collections.deque()
        self._store = collections.deque()

    def signature(self):
        return (self.kind, [d.name for d in self.dtypes], self.shapes, self.capacity)

    def debug_string(self):
        return f"{self.kind} '{self.name}' ({len(self._store)}/{self.capacity} elements)"

    # ---- storage, overridden by the other kinds -------------------------------------------
    def _size(self):
        return len(self._store)

    def _push(self, element):
        self._store.append(element)

    def _pop(self):
        return self._store.popleft()

    def _restore(self, elements):
        """Puts back elements a failed dequeue had taken, so nothing is lost or reordered."""
        self._store.extendleft(reversed(elements))

    def _can_dequeue(self):
        return len(self._store) > 0

    def _batch(self, elements):
        out = []
        for i, shape in enumerate(self.shapes):
            if elements:
                out.append(np.stack([e[i] for e in elements]))
            elif shape is not None:
                out.append(np.zeros((0,) + shape, self.dtypes[i]))
            else:
                raise errors.InvalidArgumentError(None, None, (
                    f"{self.kind} '{self.name}': dequeuing an empty batch needs the queue's shapes; "
                    f"give the queue shapes= when creating it"))
        return out

    # ---- the operations -------------------------------------------------------------------
    def size(self):
        with self._lock:
            return self._size()

    def is_closed(self):
        with self._lock:
            return self._closed

    def enqueue(self, components, cancellation, done):
        self._submit(self._enqueuers, _Attempt(done, cancellation, [self._element(components)]))

    def enqueue_many(self, components, cancellation, done):
        self._submit(self._enqueuers, _Attempt(done, cancellation, self._split(components)))

    def dequeue(self, cancellation, done):
        self._submit(self._dequeuers, _Attempt(done, cancellation, wanted=1, mode="one"))

    def dequeue_many(self, n, cancellation, done, up_to=False):
        if n < 0:
            raise errors.InvalidArgumentError(None, None, f"dequeue of {n} elements from {self.kind} "
                                                          f"'{self.name}': the count must not be negative")
        self._submit(self._dequeuers, _Attempt(done, cancellation, wanted=n, mode="up_to" if up_to else "many"))

    def close_queue(self, cancel_pending_enqueues=False):
        """Refuses new enqueues; pending ones still complete unless ``cancel_pending_enqueues``."""
        error = errors.CancelledError(None, None, (
            f"{self.kind} '{self.name}' was closed with cancel_pending_enqueues=True while this enqueue "
            f"waited for room"))
        self._shut(error if cancel_pending_enqueues else None, fail_dequeuers=False)

    def close(self, error=None):
        """The container was cleared or its session closed: every waiting attempt fails."""
        self._shut(error or errors.CancelledError(None, None, (
            f"{self.kind} '{self.name}' was destroyed (its session closed or its container was reset) "
            f"while this step waited on it")), fail_dequeuers=True)

    def _shut(self, error, fail_dequeuers):
        reports = []
        with self._lock:
            self._closed = True
            failing = []
            if error is not None:
                failing += self._enqueuers
                self._enqueuers.clear()
                if fail_dequeuers:
                    failing += self._dequeuers
                    self._dequeuers.clear()
            for attempt in failing:
                self._restore(attempt.taken)
                attempt.taken = []
                reports.append((attempt, error))
            self._flush(reports)
        _report(reports)

    # ---- attempts ---------------------------------------------------------------------------
    def _submit(self, waiting, attempt):
        reports = []
        with self._lock:
            if waiting is self._enqueuers and self._closed:
                reports.append((attempt, errors.CancelledError(None, None, (
                    f"{self.kind} '{self.name}' is closed: no more elements can be enqueued"))))
            else:
                waiting.append(attempt)
                self._flush(reports)
                if attempt.cancellation is not None and not any(a is attempt for a, _ in reports):
                    attempt.token = attempt.cancellation.register(lambda err, a=attempt: self._cancel(a, err))
                    if attempt.token is None:
                        waiting.remove(attempt)
                        self._restore(attempt.taken)
                        reports.append((attempt, attempt.cancellation.error))
                        self._flush(reports)
        _report(reports)

    def _cancel(self, attempt, error):
        reports = []
        with self._lock:
            for waiting in (self._enqueuers, self._dequeuers):
                if attempt in waiting:
                    waiting.remove(attempt)
                    self._restore(attempt.taken)
                    attempt.taken = []
                    reports.append((attempt, error))
                    self._flush(reports)
                    break
        _report(reports)

    def _flush(self, reports):
        """Runs waiting attempts in arrival order for as long as any of them makes progress."""
        progress = True
        while progress:
            progress = False
            while self._dequeuers:
                attempt = self._dequeuers[0]
                moved, result = self._try_dequeue(attempt)
                progress |= moved
                if result is None:
                    break
                self._dequeuers.popleft()
                reports.append((attempt, result))
                progress = True
            while self._enqueuers:
                attempt = self._enqueuers[0]
                while attempt.position < len(attempt.elements) and self._size() < self.capacity:
                    self._push(attempt.elements[attempt.position])
                    attempt.position += 1
                    progress = True
                if attempt.position < len(attempt.elements):
                    break
                self._enqueuers.popleft()
                reports.append((attempt, None))

    def _try_dequeue(self, attempt):
        """Takes what it can; returns (took any, None while waiting | outputs | error)."""
        moved = False
        while len(attempt.taken) < attempt.wanted and self._can_dequeue():
            attempt.taken.append(self._pop())
            moved = True
        if len(attempt.taken) == attempt.wanted:
            return moved, self._outputs(attempt)
        if not self._closed:
            return moved, None
        if attempt.mode == "up_to" and attempt.taken:
            return moved, self._outputs(attempt)
        self._restore(attempt.taken)
        attempt.taken = []
        return moved, errors.OutOfRangeError(None, None, (
            f"{self.kind} '{self.name}' is closed and has insufficient elements (requested {attempt.wanted}, "
            f"current size {self._size()})"))

    def _outputs(self, attempt):
        taken = [self._components(e) for e in attempt.taken]
        attempt.taken = []
        if attempt.mode == "one":
            return list(taken[0])
        try:
            return self._batch(taken)
        except errors.OpError as e:
            return e

    def _components(self, stored):
        return stored

    # ---- checking what is enqueued ----------------------------------------------------------
    def _element(self, components):
        self._check_arity(components)
        element = tuple(np.array(c, dtype=d, copy=True) for c, d in zip(components, self.dtypes))
        for i, value in enumerate(element):
            self._check_shape(i, value.shape)
        return element

    def _split(self, components):
        self._check_arity(components)
        batches = [np.array(c, dtype=d, copy=True) for c, d in zip(components, self.dtypes)]
        for i, b in enumerate(batches):
            if b.ndim == 0:
                raise errors.InvalidArgumentError(None, None, (
                    f"enqueue_many to {self.kind} '{self.name}': component {i} is a scalar and has no batch "
                    f"dimension 0"))
            if b.shape[0] != batches[0].shape[0]:
                raise errors.InvalidArgumentError(None, None, (
                    f"enqueue_many to {self.kind} '{self.name}': component {i} has {b.shape[0]} elements along "
                    f"dimension 0 but component 0 has {batches[0].shape[0]}; every component needs the same"))
            self._check_shape(i, b.shape[1:])
        return list(zip(*batches)) if batches[0].shape[0] else []

    def _check_arity(self, components):
        if len(components) != len(self.dtypes):
            raise errors.InvalidArgumentError(None, None, (
                f"{self.kind} '{self.name}' has {len(self.dtypes)} components, got {len(components)}"))

    def _check_shape(self, i, shape):
        want = self.shapes[i]
        if want is None:
            return
        if len(shape) != len(want) or any(w is not None and w != s for w, s in zip(want, shape)):
            raise errors.InvalidArgumentError(None, None, (
                f"shape mismatch in tuple component {i} enqueued to {self.kind} '{self.name}': expected "
                f"{_shape_str(want)}, got {list(shape)}"))


def _shape_str(shape):
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _report(reports):
    """Runs completion callbacks outside the queue's lock (a callback may touch the queue again)."""
    for attempt, result in reports:
        if attempt.token is not None:
            attempt.cancellation.deregister(attempt.token)
        attempt.done(result)


class PaddingFIFOQueue(Queue):
    """FIFO, with None dimensions allowed; a batch is padded with zeros (empty strings) to its largest shape."""

    kind = "PaddingFIFOQueue"

    def _batch(self, elements):
        out = []
        for i, shape in enumerate(self.shapes):
            dims = [max((e[i].shape[k] for e in elements), default=0) if d is None else d
                    for k, d in enumerate(shape)]
            fill = b"" if self.dtypes[i].kind == "O" else 0
            batch = np.full([len(elements)] + dims, fill, dtype=self.dtypes[i])
            for j, e in enumerate(elements):
                batch[(j,) + tuple(slice(0, n) for n in e[i].shape)] = e[i]
            out.append(batch)
        return out


class RandomShuffleQueue(Queue):
    """Hands out a uniformly random element; keeps ``min_after_dequeue`` elements until it is closed."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, dtypes, shapes, capacity, min_after_dequeue, seed, seed2):
        super().__init__(name, dtypes, shapes, capacity)
        self.min_after_dequeue = min_after_dequeue
        self._store = []
        self._rng = np.random.default_rng(None if seed == 0 and seed2 == 0 else (seed, seed2))

    def signature(self):
        return super().signature() + (self.min_after_dequeue,)

    def _pop(self):
        i = int(self._rng.integers(len(self._store)))
        store = self._store
        store[i], store[-1] = store[-1], store[i]
        return store.pop()

    def _restore(self, elements):
        self._store.extend(elements)

    def _can_dequeue(self):
        return len(self._store) > (0 if self._closed else self.min_after_dequeue)


class PriorityQueue(Queue):
    """Component 0 is an int64 scalar priority; the lowest comes out first (ties in arrival order)."""

    kind = "PriorityQueue"

    def __init__(self, name, dtypes, shapes, capacity):
        super().__init__(name, dtypes, shapes, capacity)
        self._store = []
        self._arrivals = itertools.count()

    def _push(self, element):
        heapq.heappush(self._store, (int(element[0]), next(self._arrivals), element))

    def _pop(self):
        return heapq.heappop(self._store)

    def _restore(self, elements):
        for entry in elements:
            heapq.heappush(self._store, entry)

    def _components(self, stored):
        return stored[2]
