"""Tensor: a symbolic handle to one output of an Operation (an edge of the dataflow graph)."""

from tensorweave.framework import tensor_shape
from tensorweave.framework.default_session import get_default_session_or_raise


class Tensor:
    """The ``value_index``-th output of ``op``. Python operators are attached by ``ops.tensor_operators``."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")
    __array_priority__ = 100  # numpy defers `ndarray + tensor` to Tensor.__radd__

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = tensor_shape.TensorShape(None)
        self._consumers = []

    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op.graph

    @property
    def name(self):
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Refines the static shape; an incompatible shape is a ValueError naming both."""
        shape = tensor_shape.as_shape(shape)
        if not self._shape.is_compatible_with(shape):
            raise ValueError(f"cannot set the shape of {self.name} to {shape}: it has shape {self._shape}")
        self._shape = self._shape.merge_with(shape)

    def consumers(self):
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        return get_default_session_or_raise(session, self).run(self, feed_dict)

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    __str__ = __repr__

    def __hash__(self):
        return id(self)

    def __eq__(self, other):  # TF1: identity, so tensors can key feed_dicts
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError(f"using a tf.Tensor ({self.name}) as a Python bool is not allowed: its value is only "
                        f"known when the graph runs. Use tf.cond to branch on it, or check `is not None`.")

    __nonzero__ = __bool__

    def __len__(self):
        dim = self._shape[0].value if self._shape.ndims else None
        if dim is None:
            raise TypeError(f"len() of tensor {self.name} with shape {self._shape} is not known before it runs; "
                            f"use tf.shape({self._op.name})[0]")
        return dim

    def __iter__(self):
        n = len(self)
        return (self[i] for i in range(n))

    def __reduce__(self):
        raise TypeError(f"tensor {self.name} is symbolic and cannot be pickled; fetch its value with Session.run")
