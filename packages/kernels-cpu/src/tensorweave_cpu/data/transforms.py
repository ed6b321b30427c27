"""Datasets transforming one input: repeat, take, skip, shuffle, map, filter, flat_map, interleave.

Each iterator pulls from its input's iterator on the caller's thread; the background ones are in
``background.py``. Shuffle keeps TF's buffer semantics: each element is drawn uniformly from the next
``buffer_size`` input elements (the k-th output is one of the first ``buffer_size + k`` inputs), and each
iteration of a dataset with ``reshuffle_each_iteration`` draws a new order from seeds derived, in sequence,
from the op's (seed, seed2); (0, 0) means fresh entropy, so an unseeded program shuffles differently each run.
"""

import threading

import numpy as np

from tensorweave.extension import errors

from tensorweave_cpu.data.base import DatasetValue, ElementIterator, RowIterator, row_indices


class Repeat(DatasetValue):
    """``count`` passes over the input (-1: forever; an input with no elements ends even then, as in TF)."""

    def __init__(self, input_dataset, count):
        super().__init__(input_dataset.dtypes)
        self.input, self.count = input_dataset, count

    def iterator(self, pipeline):
        return _RepeatIterator(self.input, self.count, pipeline)


class _RepeatIterator(ElementIterator):
    def __init__(self, dataset, count, pipeline):
        self._dataset, self._count, self._pipeline = dataset, count, pipeline
        self._epoch = 0
        self._produced = False
        self._current = dataset.iterator(pipeline) if count != 0 else None
        self.rows = self._current.rows if self._current is not None else None

    def _next_epoch(self):
        """Starts the next pass, unless ``count`` passes are done or the last one had no elements."""
        self._epoch += 1
        if (0 <= self._count <= self._epoch) or not self._produced:
            self._current = None
            return
        self._produced = False
        self._current = self._dataset.iterator(self._pipeline)

    def next(self):
        while self._current is not None:
            element = self._current.next()
            if element is not None:
                self._produced = True
                return element
            self._next_epoch()
        return None

    def next_rows(self, n):
        pieces, count = [], 0
        while self._current is not None and count < n:
            found = self._current.next_rows(n - count)
            if len(found):
                self._produced = True
                pieces.append(found)
                count += len(found)
            else:
                self._next_epoch()
        if len(pieces) == 1:
            return pieces[0]
        return np.concatenate([row_indices(p) for p in pieces]) if pieces else range(0)


class Take(DatasetValue):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset.dtypes)
        self.input, self.count = input_dataset, count

    def iterator(self, pipeline):
        return _TakeIterator(self.input.iterator(pipeline), self.count)


class _TakeIterator(ElementIterator):
    def __init__(self, source, count):
        self._source, self._left, self.rows = source, count, source.rows

    def next(self):
        if self._left == 0:
            return None
        element = self._source.next()
        if element is None:
            self._left = 0
        elif self._left > 0:
            self._left -= 1
        return element

    def next_rows(self, n):
        if self._left == 0:
            return []
        want = n if self._left < 0 else min(n, self._left)
        found = self._source.next_rows(want)
        self._left = 0 if len(found) < want else self._left - (len(found) if self._left > 0 else 0)
        return found


class Skip(DatasetValue):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset.dtypes)
        self.input, self.count = input_dataset, count

    def iterator(self, pipeline):
        return _SkipIterator(self.input.iterator(pipeline), self.count)


class _SkipIterator(ElementIterator):
    def __init__(self, source, count):
        self._source, self._skip, self.rows = source, count, source.rows

    def next(self):
        while self._skip != 0:
            if self._source.next() is None:
                self._skip = 0
                return None
            if self._skip > 0:
                self._skip -= 1
        return self._source.next()

    def next_rows(self, n):
        while self._skip != 0:
            want = self._skip if self._skip > 0 else max(n, 1024)
            found = self._source.next_rows(want)
            if len(found) < want:
                self._skip = 0
                return []
            if self._skip > 0:
                self._skip = 0
        return self._source.next_rows(n)


class Shuffle(DatasetValue):
    """The dataset value keeps the seed sequence, so each of its iterations draws the next order."""

    def __init__(self, input_dataset, buffer_size, seed, seed2, reshuffle_each_iteration):
        super().__init__(input_dataset.dtypes)
        if buffer_size <= 0:
            raise errors.InvalidArgumentError(None, None, f"buffer_size must be greater than zero, got {buffer_size}")
        self.input, self.buffer_size, self.reshuffle = input_dataset, buffer_size, reshuffle_each_iteration
        self._seeds = np.random.SeedSequence([seed, seed2] if seed or seed2 else None)
        self._fixed = None
        self._lock = threading.Lock()

    def _next_seed(self):
        with self._lock:
            if self.reshuffle or self._fixed is None:
                seed = int(self._seeds.spawn(1)[0].generate_state(1, np.uint64)[0])
                if not self.reshuffle:
                    self._fixed = seed
                return seed
            return self._fixed

    def iterator(self, pipeline):
        source, rng = self.input.iterator(pipeline), np.random.default_rng(self._next_seed())
        if source.rows is not None:
            return _RowShuffleIterator(source, self.buffer_size, rng)
        return _ShuffleIterator(source, self.buffer_size, rng)


class _ShuffleIterator(ElementIterator):
    """Draws uniformly from the buffer (one uniform number per draw, scaled to the buffer's length); the slot a
    drawn element leaves takes the next input element when the next one is asked for, or, once the input is
    done, the buffer's last element."""

    def __init__(self, source, size, rng):
        self._source, self._size, self._random = source, size, rng.random
        self._buffer = []
        self._hole = None
        self._source_done = False

    def next(self):
        buffer = self._buffer
        if self._hole is not None:
            element = None if self._source_done else self._source.next()
            _fill_hole(buffer, self._hole, element)
            self._source_done = element is None
            self._hole = None
        while not self._source_done and len(buffer) < self._size:
            element = self._source.next()
            if element is None:
                self._source_done = True
            else:
                buffer.append(element)
        if not buffer:
            return None
        self._hole = i = int(self._random() * len(buffer))
        return buffer[i]


def _fill_hole(buffer, hole, element):
    if element is not None:
        buffer[hole] = element
    else:
        last = buffer.pop()
        if hole < len(buffer):
            buffer[hole] = last


class _RowShuffleIterator(RowIterator):
    """The same draws over row indices, ``n`` at a time: the buffer holds row numbers, and a batch gathers its
    rows at once. Rows have no side effects, so the rows that enter the buffer during a call are read from the
    source in one go (``pending``). While the buffer is full and rows keep coming, a call's draws are made in a
    few numpy operations that give what drawing one at a time gives (see ``_draw_steady``); once the input is
    done, the buffer drains one draw at a time."""

    def __init__(self, source, size, rng):
        self._source, self._size, self._rng = source, size, rng
        self.rows = source.rows
        self._buffer, self._pending = np.empty(0, np.intp), np.empty(0, np.intp)
        self._source_done = False

    def next_rows(self, n):
        size = self._size
        if not self._source_done and len(self._pending) < size + n:
            want = size + n - len(self._pending)
            found = self._source.next_rows(want)
            self._source_done = len(found) < want
            self._pending = np.concatenate([self._pending, row_indices(found)])
        pending, taken = self._pending, 0
        if len(self._buffer) < size and len(pending):
            taken = min(size - len(self._buffer), len(pending))
            self._buffer = np.concatenate([self._buffer, pending[:taken]])
        buffer = self._buffer
        if not len(buffer):
            return range(0)
        draws = self._rng.random(n)
        steady = min(n, len(pending) - taken) if len(buffer) == size else 0
        out = self._draw_steady(draws[:steady], pending[taken:taken + steady]) if steady else range(0)
        taken += steady
        if steady < n:  # the input is done: each draw takes a row and the last row fills its slot
            buffer = self._buffer = buffer if isinstance(buffer, list) else buffer.tolist()  # cheaper per draw
            drained = []
            for u in draws[steady:].tolist():
                if not buffer:
                    break
                i = int(u * len(buffer))
                drained.append(buffer[i])
                last = buffer.pop()
                if i < len(buffer):
                    buffer[i] = last
            out = np.concatenate([row_indices(out), np.array(drained, np.intp)])
        self._pending = pending[taken:]
        return out

    def _draw_steady(self, draws, new):
        """Draw k takes the row in slot ``picks[k]`` and puts ``new[k]`` there. A slot drawn twice in one call
        gives the row the earlier draw put there, so draws are grouped by slot (stably: in draw order): the first
        of a group takes the buffer's row, each later one the previous draw's new row, and the last one's new row
        stays."""
        buffer = self._buffer
        picks = (draws * len(buffer)).astype(np.intp)
        order = np.argsort(picks, kind="stable")
        slots, arriving = picks[order], new[order]
        first = np.empty(len(slots), bool)
        first[0], first[1:] = True, slots[1:] != slots[:-1]
        last = np.empty(len(slots), bool)
        last[-1], last[:-1] = True, first[1:]
        earlier = np.empty_like(arriving)  # the row the draw before put in the same slot (where first is False)
        earlier[0], earlier[1:] = arriving[0], arriving[:-1]
        taken = np.where(first, buffer[slots], earlier)
        out = np.empty_like(taken)
        out[order] = taken
        buffer[slots[last]] = arriving[last]
        return out


class Map(DatasetValue):
    def __init__(self, input_dataset, call, dtypes):
        super().__init__(dtypes)
        self.input, self.call = input_dataset, call

    def iterator(self, pipeline):
        return _MapIterator(self.input.iterator(pipeline), self.call)


class _MapIterator(ElementIterator):
    def __init__(self, source, call):
        self._source, self._call = source, call

    def next(self):
        element = self._source.next()
        return None if element is None else self._call(element)


class Filter(DatasetValue):
    def __init__(self, input_dataset, predicate):
        super().__init__(input_dataset.dtypes)
        self.input, self.predicate = input_dataset, predicate

    def iterator(self, pipeline):
        return _FilterIterator(self.input.iterator(pipeline), self.predicate)


class _FilterIterator(ElementIterator):
    def __init__(self, source, predicate):
        self._source, self._predicate = source, predicate

    def next(self):
        while True:
            element = self._source.next()
            if element is None or bool(self._predicate(element)[0]):
                return element


class FlatMap(DatasetValue):
    def __init__(self, input_dataset, call, dtypes):
        super().__init__(dtypes)
        self.input, self.call = input_dataset, call

    def iterator(self, pipeline):
        return _FlatMapIterator(self.input.iterator(pipeline), self.call, pipeline)


class _FlatMapIterator(ElementIterator):
    def __init__(self, source, call, pipeline):
        self._source, self._call, self._pipeline = source, call, pipeline
        self._current = None

    def next(self):
        while True:
            if self._current is None:
                element = self._source.next()
                if element is None:
                    return None
                self._current = self._call(element)[0].iterator(self._pipeline)
            element = self._current.next()
            if element is not None:
                return element
            self._current = None


class Interleave(DatasetValue):
    """TF's interleave order: ``block_length`` elements from each of ``cycle_length`` open datasets in turn; a
    finished one is replaced, in its place in the cycle, by the dataset of the next input element.
    ``open_element(iterator)`` may wrap each open dataset's iterator (the parallel version reads ahead)."""

    def __init__(self, input_dataset, call, cycle_length, block_length, dtypes, open_element=None):
        super().__init__(dtypes)
        if cycle_length <= 0 or block_length <= 0:
            raise errors.InvalidArgumentError(None, None, (
                f"cycle_length ({cycle_length}) and block_length ({block_length}) must be greater than zero"))
        self.input, self.call = input_dataset, call
        self.cycle_length, self.block_length = cycle_length, block_length
        self.open_element = open_element or (lambda pipeline, it: it)

    def iterator(self, pipeline):
        return _InterleaveIterator(self, pipeline)


class _InterleaveIterator(ElementIterator):
    def __init__(self, dataset, pipeline):
        self._d, self._pipeline = dataset, pipeline
        self._source = dataset.input.iterator(pipeline)
        self._cycle = [None] * dataset.cycle_length
        self._index = self._block = self._open = 0
        self._source_done = False

    def _advance(self):
        self._index = (self._index + 1) % len(self._cycle)
        self._block = 0

    def next(self):
        while not self._source_done or self._open:
            current = self._cycle[self._index]
            if current is not None:
                element = current.next()
                if element is not None:
                    self._block += 1
                    if self._block == self._d.block_length:
                        self._advance()
                    return element
                self._cycle[self._index] = None
                self._open -= 1
                self._advance()
            elif not self._source_done:
                element = self._source.next()
                if element is None:
                    self._source_done = True
                else:
                    dataset = self._d.call(element)[0]
                    self._cycle[self._index] = self._d.open_element(self._pipeline, dataset.iterator(self._pipeline))
                    self._open += 1
            else:
                self._advance()
        return None
