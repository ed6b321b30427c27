"""``RNNCell``, the base that TF1's cells and users' cells derive from, and ``LSTMStateTuple``.

A cell is a layer called as ``cell(inputs, state) -> (output, new_state)``. As in TF1, its variables are made
on the first call in a variable scope named after the class (``basic_lstm_cell``) inside the scope the cell
was first called in (``rnn`` under ``dynamic_rnn``), and reused by every later call, so a cell called at each
time step of a loop or an unrolled sequence shares one set of weights.
"""

import collections
import re

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, nest, tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.layers.core import Layer
from tensorweave.ops import concat_split_ops, fill_ops, shape_ops, variable_scope as vs, variables
from tensorweave.ops.partitioned_variables import PartitionedVariable

__all__ = ["LSTMStateTuple", "LayerRNNCell", "RNNCell"]


def _to_snake_case(name):
    """TF's layer base names: ``BasicLSTMCell`` -> ``basic_lstm_cell``."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    snake = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return snake if snake[0] != "_" else "private" + snake


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The (cell state, hidden state) pair of an LSTM; a tuple, so it nests like one."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"LSTMStateTuple: inconsistent internal state dtypes: {c.dtype} vs {h.dtype}")
        return c.dtype


def _static_dims(size):
    """A state or output size (int, TensorShape, list) as a TensorShape."""
    if isinstance(size, (int, np.integer)):
        return tensor_shape.TensorShape([int(size)])
    return tensor_shape.as_shape(size)


def static_state_shape(batch_size, size):
    """``[batch_size] + size`` as a TensorShape; ``batch_size`` is an int or None."""
    return tensor_shape.TensorShape([batch_size]).concatenate(_static_dims(size))


def state_shape(batch_size, size):
    """The shape ``[batch_size] + size`` as a list (static batch) or an int32 tensor, and its static shape."""
    dims = _static_dims(size)
    static_batch = batch_size if isinstance(batch_size, (int, np.integer)) else constant_value(
        convert_to_tensor(batch_size, dtype=dtypes.int32))
    static = tensor_shape.TensorShape([None if static_batch is None else int(static_batch)]).concatenate(dims)
    if static.is_fully_defined():
        return static.as_list(), static
    if not dims.is_fully_defined():
        raise ValueError(f"state or output size {size!r} must be fully defined to make a tensor of it")
    batch = shape_ops.reshape(convert_to_tensor(batch_size, dtype=dtypes.int32), [1])
    return concat_split_ops.concat([batch, np.array(dims.as_list(), np.int32)], 0), static


def zero_state_tensors(state_size, batch_size, dtype):
    """Zeros shaped ``[batch_size] + s`` for every size ``s`` in the (nested) ``state_size``."""
    def zeros(size):
        shape, static = state_shape(batch_size, size)
        value = fill_ops.zeros(shape, dtype=dtype)
        value.set_shape(static)
        return value
    return nest.map_structure(zeros, state_size)


class RNNCell(Layer):
    """Abstract RNN cell: subclasses give ``state_size``, ``output_size`` and either ``build``/``call`` (made and
    run through the layer machinery, variables in ``<scope>/<snake_case_class_name>``) or their own ``__call__``
    (TF1's older style, e.g. ``with tf.variable_scope(scope or "my_cell"): tf.get_variable(...)``)."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._base_name = name or _to_snake_case(type(self).__name__)  # a name given is made unique, as TF1's

    def __call__(self, inputs, state, scope=None, *args, **kwargs):
        """``(output, new_state)`` for one step; ``scope`` (a name or VariableScope) holds the variables instead
        of the class-named scope."""
        if scope is not None:
            with vs.variable_scope(scope, custom_getter=self._rnn_get_variable) as scope:
                return self._layer_call(inputs, state, *args, scope=scope, **kwargs)
        if getattr(self, "_rnncell_scope", None) is None:
            self._rnncell_scope = vs.get_variable_scope()
        with vs.variable_scope(self._rnncell_scope, custom_getter=self._rnn_get_variable):
            return self._layer_call(inputs, state, *args, **kwargs)

    def _rnn_get_variable(self, getter, *args, **kwargs):
        """Counts a variable a subclass makes with ``tf.get_variable`` in its ``call`` among the cell's weights."""
        variable = getter(*args, **kwargs)
        trainable = any(variable is v for v in variables.trainable_variables()) or (
            isinstance(variable, PartitionedVariable)
            and any(list(variable)[0] is v for v in variables.trainable_variables()))
        self._track_weight(variable, trainable)
        return variable

    def _track_weight(self, variable, trainable):
        weights = self._trainable_weights if trainable else self._non_trainable_weights
        for part in (list(variable) if isinstance(variable, PartitionedVariable) else [variable]):
            if all(part is not v for v in weights):
                weights.append(part)

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=True,
                   constraint=None, partitioner=None):
        variable = vs.get_variable(name, shape=shape, dtype=dtype or self.dtype, initializer=initializer,
                                   regularizer=regularizer, trainable=trainable and self.trainable,
                                   constraint=constraint, partitioner=partitioner)
        self._track_weight(variable, trainable and self.trainable)
        return variable

    add_variable = add_weight

    def _set_cell_scope(self, scope):
        """TF1's layer scope: ``scope`` itself when given, else a unique ``<name or class_name>`` scope, fixed on
        the first call."""
        if self._scope is None:
            if self._reuse:
                with vs.variable_scope(scope if scope is not None else self._base_name) as captured:
                    self._scope = captured
            else:
                with vs.variable_scope(scope, default_name=self._base_name) as captured:
                    self._scope = captured

    def _layer_call(self, inputs, state, *args, scope=None, **kwargs):
        self._set_cell_scope(scope)
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as current:
            with graph_mod.name_scope(current.original_name_scope):
                if not self.built:
                    flat = [convert_to_tensor(x) for x in nest.flatten(inputs)]
                    if self.dtype is None and flat:
                        self.dtype = flat[0].dtype.base_dtype
                    shapes = nest.pack_sequence_as(inputs, [x.shape for x in flat])
                    self.build(shapes)
                    self.built = True
                return self.call(inputs, state, *args, **kwargs)

    def call(self, inputs, state):
        raise NotImplementedError(f"{type(self).__name__} must define call(inputs, state) or __call__")

    @property
    def state_size(self):
        """An int, a TensorShape, or a nested tuple of them (e.g. an LSTMStateTuple of ints)."""
        raise NotImplementedError(f"{type(self).__name__} must define the state_size property")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define the output_size property")

    def zero_state(self, batch_size, dtype):
        """Zeros shaped like the state, ``[batch_size, s]`` for each size ``s`` of ``state_size``."""
        with graph_mod.name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtype)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            batch_size = inputs.shape[0].value
            if batch_size is None:
                batch_size = shape_ops.shape(inputs)[0]
            dtype = dtype or inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError("get_initial_state needs inputs, or both batch_size and dtype")
        return self.zero_state(batch_size, dtype)


class LayerRNNCell(RNNCell):
    """A cell whose variables are made by ``build`` and that is called straight through the layer machinery:
    unlike a plain RNNCell it does not re-enter the scope of its first call, so two such cells built in one
    scope get ``gru_cell`` and ``gru_cell_1``, as in TF1."""

    def __call__(self, inputs, state, scope=None, *args, **kwargs):
        return self._layer_call(inputs, state, *args, scope=scope, **kwargs)


def assert_like_rnncell(name, cell):
    """Refuses what cannot serve as a cell, naming what it lacks."""
    missing = [what for what, ok in (
        ("'output_size' property is missing", hasattr(cell, "output_size")),
        ("'state_size' property is missing", hasattr(cell, "state_size")),
        ("either 'zero_state' or 'get_initial_state' method is required",
         hasattr(cell, "zero_state") or hasattr(cell, "get_initial_state")),
        ("is not callable", callable(cell))) if not ok]
    if missing:
        raise TypeError(f"The argument {name!r} ({cell!r}) is not an RNNCell: {', '.join(missing)}.")
