"""IndexedSlices: a sparse gradient (rows ``indices`` of a dense tensor hold ``values``)."""

from tensorweave.framework.tensor_conversion import register_tensor_conversion_function


class IndexedSlices:
    """Rows of a tensor of shape ``dense_shape``: ``dense[indices[i]] += values[i]``."""

    def __init__(self, values, indices, dense_shape=None):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def graph(self):
        return self.values.graph

    @property
    def name(self):
        return self.values.name

    @property
    def op(self):
        return self.values.op

    @property
    def device(self):
        return self.values.device

    def get_shape(self):
        from tensorweave.framework.tensor_util import constant_value_as_shape
        if self.dense_shape is None:
            return self.values.shape[:0].concatenate([None]).concatenate(self.values.shape[1:])
        return constant_value_as_shape(self.dense_shape)

    @property
    def shape(self):
        return self.get_shape()

    def __repr__(self):
        return f"IndexedSlices(indices={self.indices}, values={self.values}, dense_shape={self.dense_shape})"


class IndexedSlicesValue:
    """A fetched IndexedSlices: numpy ``values``, ``indices`` and ``dense_shape``."""

    def __init__(self, values, indices, dense_shape):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    def __repr__(self):
        return f"IndexedSlicesValue(indices={self.indices!r}, values={self.values!r}, dense_shape={self.dense_shape!r})"


def to_dense(value, name=None):
    """Sums the slices into a dense tensor (UnsortedSegmentSum over the rows)."""
    from tensorweave.ops import math_ops
    if value.dense_shape is None:
        raise ValueError(f"cannot convert {value!r} to a dense tensor: its dense_shape is unknown")
    from tensorweave.ops import array_ops
    return math_ops.unsorted_segment_sum(value.values, value.indices, array_ops.gather(value.dense_shape, 0),
                                         name=name)


def _convert(value, dtype=None, name=None, as_ref=False):
    if dtype is not None and dtype != value.dtype:
        raise ValueError(f"cannot convert IndexedSlices of dtype {value.dtype.name} to {dtype}")
    return to_dense(value, name=name)


register_tensor_conversion_function(IndexedSlices, _convert)


def _register_fetch():
    from tensorweave.runtime.fetches import register_fetch_conversion
    register_fetch_conversion(
        IndexedSlices,
        lambda s: [s.values, s.indices] + ([s.dense_shape] if s.dense_shape is not None else []),
        lambda v: IndexedSlicesValue(v[0], v[1], v[2] if len(v) > 2 else None))


_register_fetch()
