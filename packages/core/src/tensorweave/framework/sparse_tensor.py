"""SparseTensor: a tensor given by the ``indices`` of its non-default entries, their ``values`` and its
``dense_shape`` (three dense tensors), as TF1 has it; fetched as a SparseTensorValue and fed with one (or an
``(indices, values, dense_shape)`` tuple), part by part. The ops on it are in ops/sparse_ops.py and
ops/sparse_math_ops.py."""

import collections

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.default_session import get_default_session_or_raise
from tensorweave.framework.tensor_conversion import convert_to_tensor, register_fetch_conversion
from tensorweave.framework.tensor_util import constant_value_as_shape

SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = "A fetched SparseTensor: numpy ``indices`` (int64 [N, rank]), ``values`` [N], ``dense_shape``."


class SparseTensor:
    """``dense[indices[i]] = values[i]``; every other entry of ``dense_shape`` holds the default (0 or '')."""

    @classmethod
    def from_value(cls, sparse_tensor_value):
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        return cls(*sparse_tensor_value)

    def __init__(self, indices, values, dense_shape, static_shape=None):
        self._static_shape = tensor_shape.TensorShape(static_shape)
        self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
        self._values = convert_to_tensor(values, name="values")
        self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64, name="dense_shape")
        rank = self._dense_shape.shape.with_rank(1)[0]
        self._indices.shape.assert_is_compatible_with(tensor_shape.TensorShape([None, rank]))
        self._values.shape.assert_is_compatible_with(tensor_shape.TensorShape([None]))

    indices = property(lambda self: self._indices, doc="int64 [N, rank]: where the values are.")
    values = property(lambda self: self._values, doc="[N]: the values at ``indices``.")
    dense_shape = property(lambda self: self._dense_shape, doc="int64 [rank]: the shape of the dense tensor.")
    dtype = property(lambda self: self._values.dtype)
    graph = property(lambda self: self._values.graph)
    op = property(lambda self: self._values.op, doc="The op that produced ``values``.")

    def get_shape(self):
        """The static shape of the dense tensor (what is known of ``dense_shape`` before running)."""
        return constant_value_as_shape(self._dense_shape).merge_with(self._static_shape)

    @property
    def shape(self):
        return self.get_shape()

    def consumers(self):
        """The ops that read any of the three parts, each once."""
        seen = {}
        for part in (self._indices, self._values, self._dense_shape):
            for op in part.consumers():
                seen.setdefault(id(op), op)
        return list(seen.values())

    def eval(self, feed_dict=None, session=None):
        return get_default_session_or_raise(session, self).run(self, feed_dict)

    def __repr__(self):
        return f"SparseTensor(indices={self._indices}, values={self._values}, dense_shape={self._dense_shape})"


def expand_sparse(leaves):
    """``leaves`` with each SparseTensor replaced by its three parts: what tf.cond and tf.while_loop carry."""
    flat = []
    for leaf in leaves:
        flat.extend((leaf.indices, leaf.values, leaf.dense_shape) if isinstance(leaf, SparseTensor) else [leaf])
    return flat


def pack_sparse(leaves, flat, static_shapes=None):
    """``expand_sparse`` undone: ``flat`` regrouped like ``leaves``, a SparseTensor from each three parts (with
    its static shape from ``static_shapes``, one per leaf, where given)."""
    out, i = [], 0
    for n, leaf in enumerate(leaves):
        if isinstance(leaf, SparseTensor):
            shape = None if static_shapes is None else static_shapes[n]
            out.append(SparseTensor(*flat[i:i + 3], static_shape=shape))
            i += 3
        else:
            out.append(flat[i])
            i += 1
    return out


def _feed_parts(sparse, value):
    """TF1's feed of a SparseTensor: a SparseTensorValue or an (indices, values, dense_shape) tuple."""
    if isinstance(value, SparseTensor):
        raise TypeError(f"the value of a feed cannot be a tf.SparseTensor (feeding {sparse!r}); feed a "
                        f"tf.SparseTensorValue or an (indices, values, dense_shape) tuple")
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise TypeError(f"a SparseTensor is fed with a tf.SparseTensorValue or an (indices, values, dense_shape) "
                        f"tuple, got {type(value).__name__} {value!r:.80}")
    return list(zip([sparse.indices, sparse.values, sparse.dense_shape], value))


register_fetch_conversion(SparseTensor, lambda s: [s.indices, s.values, s.dense_shape],
                          lambda v: SparseTensorValue(*v), feed=_feed_parts)
