"""Dataset values and element iterators: the contract every dataset kind follows.

A dataset op's output (its ``variant``) is a DatasetValue: a definition made fresh by each run of the op.
``value.iterator(pipeline)`` starts an ElementIterator at its beginning; ``it.next()`` returns the next
element, a tuple of numpy arrays (one per component), or None at the end, and keeps returning None after.
An error raised by ``next()`` does not end the iteration: the next call goes on with the following element,
as TF's iterators do (a map function failing on one element fails only that element).

Row iterators: where every element is a row of the same arrays (the slices of ``from_tensor_slices``, then
repeated, shuffled, taken or skipped), an iterator's ``rows`` are those arrays and ``next_rows(n)`` returns
the indices of its next ``n`` elements (fewer only at the end) as a ``range`` or a 1-D intp array, so a batch
is one gather per component instead of a stack of ``n`` slices. ``next()`` and ``next_rows()`` advance the
same position.
"""

import numpy as np

from tensorweave.extension import errors


class DatasetValue:
    """What a dataset op computes. ``dtypes`` are the components' numpy dtypes (None for variants)."""

    def __init__(self, dtypes):
        self.dtypes = list(dtypes)

    def iterator(self, pipeline):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__}: {len(self.dtypes)} components>"


class ElementIterator:
    rows = None  # the arrays whose rows the elements are, for row iterators

    @property
    def in_memory(self):
        """Whether each element is only index arithmetic and a gather of arrays in memory (rows, their
        batches): prefetching such elements on a thread costs more than computing them when asked."""
        return self.rows is not None

    def next(self):
        raise NotImplementedError

    def next_rows(self, n):
        raise NotImplementedError


class RowIterator(ElementIterator):
    """An iterator whose elements are rows of ``rows``: ``next()`` is the row of ``next_rows(1)``."""

    def next(self):
        found = self.next_rows(1)
        if not len(found):
            return None
        i = found[0]
        return tuple([c[i, ...] for c in self.rows])


class GeneratorIterator(ElementIterator):
    """An iterator over a Python generator of elements (for sources, whose generators raise no errors)."""

    def __init__(self, generator):
        self._generator = generator

    def next(self):
        return next(self._generator, None)


class EmptyIterator(ElementIterator):
    def next(self):
        return None


def numpy_dtypes(tf_dtypes):
    return [None if d.name == "variant" else d.as_numpy_dtype for d in tf_dtypes]


def as_array(value, dtype):
    """``value`` as an ndarray of ``dtype`` (a numpy scalar or bytes becomes 0-d); variants stay as they are."""
    if dtype is None or type(value) is np.ndarray:
        return value
    if dtype is np.object_:
        out = np.empty((), dtype=object)
        out[()] = value
        return out
    return np.asarray(value, dtype=dtype)


def scalar(value, what):
    value = np.asarray(value)
    if value.ndim != 0:
        raise errors.InvalidArgumentError(None, None, f"{what} must be a scalar, got shape {list(value.shape)}")
    return value.item()


class FunctionCall:
    """A dataset op's function, bound to the session that runs it and to its captured values.

    ``call(element)`` returns the function's outputs as a tuple of arrays; an error inside the function
    names the failing op (by the runtime) and the dataset op whose function it is.
    """

    def __init__(self, runner, captured, node):
        self._runner = runner
        self._captured = list(captured)
        self._dtypes = numpy_dtypes(runner.function.output_dtypes)
        self._where = f"in function {runner.function.name!r} of {node.name} ({node.op_type})"

    def __call__(self, element):
        try:
            outputs = self._runner(list(element) + self._captured)
        except errors.OpError as e:
            raise type(e)(None, None, f"{e.message}\n  {self._where}") from e
        return tuple(as_array(v, d) for v, d in zip(outputs, self._dtypes))


def shape_text(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


def row_indices(found):
    """``next_rows``' result as an intp array (a range without listing it)."""
    if isinstance(found, range):
        return np.arange(found.start, found.stop, found.step, dtype=np.intp)
    return np.asarray(found, dtype=np.intp)
