"""Iterators that compute ahead on background threads into bounded buffers: prefetch, the parallel map
(results in input order, as TF's deterministic map) and the read-ahead of parallel interleave.

Threads start at the first ``next()`` and belong to the pipeline, which stops them when it closes. An
error computing an element is handed to the consumer in that element's turn; the threads go on.
"""

import collections
import os
import threading

from tensorweave.extension import errors

from tensorweave_cpu.data.base import DatasetValue, ElementIterator
from tensorweave_cpu.data.pipeline import Failure

AUTOTUNE = -1
AUTOTUNE_BUFFER = 8


def autotuned_threads():
    return max(os.cpu_count() or 1, 1)


def _take(value):
    if isinstance(value, Failure):
        raise value.error
    return value


class Prefetch(DatasetValue):
    def __init__(self, input_dataset, buffer_size):
        super().__init__(input_dataset.dtypes)
        if buffer_size < AUTOTUNE:
            raise errors.InvalidArgumentError(None, None, f"buffer_size must be >= 0 or AUTOTUNE (-1), got "
                                                          f"{buffer_size}")
        self.input = input_dataset
        self.buffer_size = AUTOTUNE_BUFFER if buffer_size == AUTOTUNE else buffer_size

    def iterator(self, pipeline):
        """Elements gathered from arrays in memory are computed when asked for: a thread would hold the
        interpreter lock for the same work and add a hand-over per element (and, on a busy machine, stalls
        whenever the OS parks it while it holds the lock), so prefetching them only slows the step."""
        source = self.input.iterator(pipeline)
        if not self.buffer_size or source.in_memory:
            return source
        return PrefetchIterator(pipeline, source, self.buffer_size, "prefetch")


class PrefetchIterator(ElementIterator):
    """One producer thread keeps up to ``size`` elements of ``source`` ready."""

    def __init__(self, pipeline, source, size, what):
        self._pipeline, self._source, self._size, self._what = pipeline, source, size, what
        self._cond = pipeline.condition()
        self._buffer = collections.deque()
        self._done = False
        self._started = False

    def next(self):
        if not self._started:
            self._started = True
            self._pipeline.start(self._produce, self._what)
        with self._cond:
            if not self._buffer and not self._done:
                self._pipeline.wait(self._cond, lambda: self._buffer or self._done)
            if not self._buffer:
                return None
            element = self._buffer.popleft()
            self._cond.notify()  # the one producer
        return _take(element)

    def _produce(self):
        pipeline, cond, buffer = self._pipeline, self._cond, self._buffer
        try:
            while True:
                with cond:
                    pipeline.wait(cond, lambda: len(buffer) < self._size)
                try:
                    element = self._source.next()
                except Exception as e:  # noqa: BLE001 - handed to the consumer in its turn
                    if pipeline.closed:
                        return
                    element = Failure(e)
                with cond:
                    if element is None:
                        self._done = True
                    else:
                        buffer.append(element)
                    cond.notify_all()
                if element is None:
                    return
        except errors.CancelledError:
            return  # the pipeline closed


class ParallelMap(DatasetValue):
    def __init__(self, input_dataset, call, num_parallel_calls, dtypes):
        super().__init__(dtypes)
        if num_parallel_calls <= 0 and num_parallel_calls != AUTOTUNE:
            raise errors.InvalidArgumentError(None, None, (
                f"num_parallel_calls must be greater than zero or AUTOTUNE (-1), got {num_parallel_calls}"))
        self.input, self.call = input_dataset, call
        self.num_calls = autotuned_threads() if num_parallel_calls == AUTOTUNE else num_parallel_calls

    def iterator(self, pipeline):
        return ParallelMapIterator(pipeline, self.input.iterator(pipeline), self.call, self.num_calls)


class ParallelMapIterator(ElementIterator):
    """``num_calls`` worker threads each take the next input element (numbered, one at a time) and map it;
    the consumer takes results by number, so the order is the input's. At most ``num_calls`` elements are
    taken and not yet consumed."""

    def __init__(self, pipeline, source, call, num_calls):
        self._pipeline, self._source, self._call, self._num_calls = pipeline, source, call, num_calls
        self._cond = pipeline.condition()
        self._input_lock = threading.Lock()
        self._results = {}
        self._reserved = 0  # buffer places claimed by workers
        self._numbered = 0  # input elements taken
        self._consumed = 0
        self._end = None  # the number of the first element past the end, once known
        self._started = False

    def next(self):
        if not self._started:
            self._started = True
            for i in range(self._num_calls):
                self._pipeline.start(self._work, f"map-{i}")
        with self._cond:
            self._pipeline.wait(self._cond, lambda: self._consumed in self._results or (
                self._end is not None and self._consumed >= self._end))
            if self._consumed not in self._results:
                return None
            result = self._results.pop(self._consumed)
            self._consumed += 1
            self._cond.notify_all()
        return _take(result)

    def _work(self):
        pipeline, cond = self._pipeline, self._cond
        try:
            while True:
                with cond:
                    pipeline.wait(cond, lambda: self._end is not None or
                                  self._reserved - self._consumed < self._num_calls)
                    if self._end is not None:
                        return
                    self._reserved += 1
                with self._input_lock:  # input elements are taken and numbered in order, one at a time
                    number = self._numbered
                    self._numbered += 1
                    try:
                        element = self._source.next() if self._end is None else None
                    except Exception as e:  # noqa: BLE001 - handed to the consumer in its turn
                        element = Failure(e)
                if element is None:
                    with cond:
                        self._end = number if self._end is None else min(self._end, number)
                        cond.notify_all()
                    return
                if not isinstance(element, Failure):
                    try:
                        element = self._call(element)
                    except Exception as e:  # noqa: BLE001
                        element = Failure(e)
                with cond:
                    self._results[number] = element
                    cond.notify_all()
        except errors.CancelledError:
            return  # the pipeline closed
