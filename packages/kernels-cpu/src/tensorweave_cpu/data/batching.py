"""batch, padded_batch and unbatch (map_and_batch is a parallel map feeding a batch, see kernels)."""

import numpy as np

from tensorweave.extension import errors

from tensorweave_cpu.data.base import DatasetValue, ElementIterator, shape_text


def stack(items, index, dtype):
    """Component ``index`` of a batch's elements stacked along a new first dimension; all must share a shape."""
    first = items[0].shape
    if dtype is not np.object_:
        try:
            out = np.array(items, dtype=dtype)
            if out.shape[1:] == first:
                return out
        except ValueError:
            pass  # shapes differ: said below
    for k, item in enumerate(items):
        if item.shape != first:
            raise errors.InvalidArgumentError(None, None, (
                f"Cannot batch tensors with different shapes in component {index}. First element had shape "
                f"{shape_text(first)} and element {k} had shape {shape_text(item.shape)}. To batch elements of "
                f"different shapes, use padded_batch"))
    out = np.empty((len(items),) + first, dtype=object)
    for k, item in enumerate(items):
        out[k] = item
    return out


class _BatchingIterator(ElementIterator):
    """Collects up to ``size`` input elements; the last, smaller batch is dropped when ``drop_remainder``."""

    def __init__(self, source, size, drop_remainder, combine):
        self._source, self._size, self._drop, self._combine = source, size, drop_remainder, combine
        self._done = False

    def next(self):
        items, take, size = [], self._source.next, self._size
        while not self._done and len(items) < size:
            element = take()
            if element is None:
                self._done = True
            else:
                items.append(element)
        if not items or (self._drop and len(items) < self._size):
            return None
        return self._combine(items)


class Batch(DatasetValue):
    def __init__(self, input_dataset, batch_size, drop_remainder):
        super().__init__(input_dataset.dtypes)
        if batch_size <= 0:
            raise errors.InvalidArgumentError(None, None, f"batch_size must be greater than zero, got {batch_size}")
        self.input, self.batch_size, self.drop_remainder = input_dataset, batch_size, drop_remainder

    def iterator(self, pipeline):
        dtypes, source = self.dtypes, self.input.iterator(pipeline)
        if source.rows is not None:
            return _RowBatchIterator(source, self.batch_size, self.drop_remainder)
        return _BatchingIterator(source, self.batch_size, self.drop_remainder,
                                 lambda items: tuple(stack([e[i] for e in items], i, d) for i, d in enumerate(dtypes)))


class _RowBatchIterator(ElementIterator):
    """A batch of a row iterator: one gather per component (what stacking its slices would give)."""

    in_memory = True

    def __init__(self, source, size, drop_remainder):
        self._source, self._size, self._drop = source, size, drop_remainder

    def next(self):
        found = self._source.next_rows(self._size)
        if not len(found) or (self._drop and len(found) < self._size):
            return None
        if isinstance(found, range):
            return tuple([c[found.start:found.stop] for c in self._source.rows])
        index = np.asarray(found, dtype=np.intp)
        return tuple([c[index] for c in self._source.rows])


class PaddedBatch(DatasetValue):
    """Each component padded with its padding value to its padded shape (-1: the batch's largest), then stacked."""

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values, drop_remainder):
        super().__init__(input_dataset.dtypes)
        if batch_size <= 0:
            raise errors.InvalidArgumentError(None, None, f"batch_size must be greater than zero, got {batch_size}")
        self.input, self.batch_size, self.drop_remainder = input_dataset, batch_size, drop_remainder
        self.padded_shapes = [tuple(int(d) for d in np.asarray(s).reshape(-1)) for s in padded_shapes]
        self.padding_values = padding_values

    def iterator(self, pipeline):
        return _BatchingIterator(self.input.iterator(pipeline), self.batch_size, self.drop_remainder, self._combine)

    def _combine(self, items):
        return tuple(self._pad(i, [e[i] for e in items]) for i in range(len(self.dtypes)))

    def _pad(self, index, parts):
        padded = self.padded_shapes[index]
        for part in parts:
            if part.ndim != len(padded):
                raise errors.InvalidArgumentError(None, None, (
                    f"padded_batch: component {index} has rank {part.ndim} (shape {shape_text(part.shape)}), but its "
                    f"padded shape {shape_text(padded)} has rank {len(padded)}"))
        shape = tuple(max(p.shape[d] for p in parts) if size < 0 else size for d, size in enumerate(padded))
        for part in parts:
            if any(have > want for have, want in zip(part.shape, shape)):
                raise errors.DataLossError(None, None, (
                    f"Attempted to pad to a smaller size than the input element: component {index} has shape "
                    f"{shape_text(part.shape)}, larger than its padded shape {shape_text(shape)}"))
        dtype = self.dtypes[index]
        out = np.empty((len(parts),) + shape, dtype=dtype)
        out[...] = self.padding_values[index]
        for k, part in enumerate(parts):
            out[(k,) + tuple(slice(0, n) for n in part.shape)] = part
        return out


class Unbatch(DatasetValue):
    def __init__(self, input_dataset):
        super().__init__(input_dataset.dtypes)
        self.input = input_dataset

    def iterator(self, pipeline):
        return _UnbatchIterator(self.input.iterator(pipeline))


class _UnbatchIterator(ElementIterator):
    def __init__(self, source):
        self._source = source
        self._current, self._index, self._size = None, 0, 0

    def next(self):
        while self._index >= self._size:
            element = self._source.next()
            if element is None:
                return None
            sizes = {c.shape[0] if c.ndim else None for c in element}
            if None in sizes or len(sizes) != 1:
                raise errors.InvalidArgumentError(None, None, (
                    f"unbatch: the components of an element must have the same first dimension, got shapes "
                    f"{[shape_text(c.shape) for c in element]}"))
            self._current, self._index, self._size = element, 0, sizes.pop()
        i = self._index
        self._index += 1
        return tuple(c[i, ...] for c in self._current)
