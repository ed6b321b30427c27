"""Datasets made from values: tensors, their slices, ranges, a Python generator; and zip and concatenate."""

import numpy as np

from tensorweave.extension import errors

from tensorweave_cpu.data.base import DatasetValue, ElementIterator, GeneratorIterator, RowIterator


class Tensors(DatasetValue):
    """One element."""

    def __init__(self, components, dtypes):
        super().__init__(dtypes)
        self.components = tuple(components)

    def iterator(self, pipeline):
        return GeneratorIterator(iter((self.components,)))


class TensorSlices(DatasetValue):
    """The slices along the first dimension; each slice is a view of the component."""

    def __init__(self, components, dtypes):
        super().__init__(dtypes)
        sizes = {c.shape[0] if c.ndim else None for c in components}
        if None in sizes:
            raise errors.InvalidArgumentError(None, None, "a component to slice is a scalar; every component needs "
                                                          "a first dimension")
        if len(sizes) != 1:
            raise errors.InvalidArgumentError(None, None, (
                f"the components to slice have different first dimensions {[int(c.shape[0]) for c in components]}; "
                f"they must all have the same size"))
        self.components = tuple(components)
        self.size = sizes.pop()

    def iterator(self, pipeline):
        return _SliceIterator(self.components, self.size)


class _SliceIterator(RowIterator):
    def __init__(self, components, size):
        self.rows, self._size, self._at = components, size, 0

    def next(self):
        i = self._at
        if i >= self._size:
            return None
        self._at = i + 1
        return tuple([c[i, ...] for c in self.rows])

    def next_rows(self, n):
        start = self._at
        self._at = min(start + n, self._size)
        return range(start, self._at)


class Range(DatasetValue):
    def __init__(self, start, stop, step):
        super().__init__([np.int64])
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        self.range = range(start, stop, step)

    def iterator(self, pipeline):
        return GeneratorIterator((np.array(v, dtype=np.int64),) for v in self.range)


class Generator(DatasetValue):
    """The elements a Python generator yields, converted by the op's GeneratorSource (see
    tensorweave.data.generator_source). An element that fails to convert fails alone: the generator goes on."""

    def __init__(self, source, args, dtypes):
        super().__init__(dtypes)
        self.source = source
        self.args = [_generator_arg(a) for a in args]

    def iterator(self, pipeline):
        return _GeneratorElements(self.source, self.args)


def _generator_arg(value):
    """As TF passes them: a 0-d value as a numpy scalar (bytes for a string), other values as arrays."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    return value.encode() if isinstance(value, str) else value


class _GeneratorElements(ElementIterator):
    def __init__(self, source, args):
        self._source = source
        self._args = args
        self._items = None

    def next(self):
        if self._items is None:
            self._items = iter(self._source.generator(*self._args))
        value = next(self._items, _END)
        if value is _END:
            self._items = iter(())
            return None
        return tuple(self._source.flat_values(value))


_END = object()


class Zip(DatasetValue):
    """Elements of several datasets side by side; ends with the shortest."""

    def __init__(self, inputs, dtypes):
        super().__init__(dtypes)
        self.inputs = list(inputs)

    def iterator(self, pipeline):
        return _ZipIterator([d.iterator(pipeline) for d in self.inputs])


class _ZipIterator(ElementIterator):
    def __init__(self, iterators):
        self._iterators = iterators

    def next(self):
        parts = []
        for it in self._iterators:
            element = it.next()
            if element is None:
                return None
            parts.extend(element)
        return tuple(parts)


class Concatenate(DatasetValue):
    def __init__(self, first, second, dtypes):
        super().__init__(dtypes)
        self.inputs = (first, second)

    def iterator(self, pipeline):
        return _ConcatenateIterator(self.inputs, pipeline)


class _ConcatenateIterator(ElementIterator):
    def __init__(self, inputs, pipeline):
        self._pending = list(inputs)
        self._pipeline = pipeline
        self._current = None

    def next(self):
        while True:
            if self._current is None:
                if not self._pending:
                    return None
                self._current = self._pending.pop(0).iterator(self._pipeline)
            element = self._current.next()
            if element is not None:
                return element
            self._current = None
