"""IndexedSlices: a sparse gradient (rows ``indices`` of a dense tensor hold ``values``). Session.run fetches
one as an IndexedSlicesValue; ``ops/segment_ops.py`` converts one to a dense tensor (an UnsortedSegmentSum)."""

from tensorweave.framework.tensor_conversion import register_fetch_conversion
from tensorweave.framework.tensor_util import constant_value_as_shape


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


register_fetch_conversion(
    IndexedSlices,
    lambda s: [s.values, s.indices] + ([s.dense_shape] if s.dense_shape is not None else []),
    lambda v: IndexedSlicesValue(v[0], v[1], v[2] if len(v) > 2 else None))
