"""TF1's cells: ``BasicRNNCell``, ``GRUCell``, ``BasicLSTMCell``, ``LSTMCell`` and ``MultiRNNCell``.

Weights, their names and the order of the gates are TF 1.15's (``kernel`` of shape ``[input + hidden, k *
units]`` multiplying ``concat([inputs, h])``; LSTM gates i, j, f, o; GRU's ``gates/`` (r, u) and
``candidate/``), so a TF1 checkpoint of these cells loads and gives the same numbers.
"""

import logging

from tensorweave.framework import graph as graph_mod, nest, tensor_shape
from tensorweave.ops import (
    comparison_ops, concat_split_ops, init_ops, math_ops, matmul_ops, nn_ops, slicing_ops, unary_math_ops,
    variable_scope as vs,
)
from tensorweave.ops.partitioned_variables import fixed_size_partitioner
from tensorweave.rnn.cell import LayerRNNCell, LSTMStateTuple, RNNCell, zero_state_tensors

__all__ = ["BasicLSTMCell", "BasicRNNCell", "GRUCell", "LSTMCell", "MultiRNNCell"]

_log = logging.getLogger("tensorflow")

_ACTIVATIONS = {"tanh": unary_math_ops.tanh, "sigmoid": unary_math_ops.sigmoid, "relu": nn_ops.relu,
                "relu6": nn_ops.relu6, "elu": nn_ops.elu, "softsign": nn_ops.softsign, "softplus": nn_ops.softplus,
                "linear": lambda x: x}


def _activation(activation):
    if activation is None:
        return unary_math_ops.tanh
    if callable(activation):
        return activation
    if activation in _ACTIVATIONS:
        return _ACTIVATIONS[activation]
    raise ValueError(f"unknown activation {activation!r}: pass a function or one of {sorted(_ACTIVATIONS)}")


def _input_depth(cell, input_shape):
    shape = tensor_shape.as_shape(input_shape)
    if shape.ndims is None or shape[-1].value is None:
        raise ValueError(f"{type(cell).__name__}: the inputs' last dimension must be known to make the kernel, "
                         f"got inputs of shape {shape}; give the input placeholder a static depth")
    return shape[-1].value


def _linear(inputs, state, kernel, bias):
    return nn_ops.bias_add(matmul_ops.matmul(concat_split_ops.concat([inputs, state], 1), kernel), bias)


class BasicRNNCell(LayerRNNCell):
    """``output = new_state = activation(concat([inputs, state]) @ kernel + bias)``."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(self, inputs_shape)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_weight("bias", [self._num_units], initializer=init_ops.zeros_initializer(self.dtype))
        self.built = True

    def call(self, inputs, state):
        output = self._activation(_linear(inputs, state, self._kernel, self._bias))
        return output, output


class GRUCell(LayerRNNCell):
    """Gated recurrent unit: gates r, u = sigmoid(...); candidate from ``r * state``; ``u * state + (1 - u) * c``."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(self, inputs_shape)
        units = self._num_units
        self._gate_kernel = self.add_weight("gates/kernel", [depth + units, 2 * units],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight("gates/bias", [2 * units], initializer=(
            self._bias_initializer or init_ops.constant_initializer(1.0, dtype=self.dtype)))
        self._candidate_kernel = self.add_weight("candidate/kernel", [depth + units, units],
                                                 initializer=self._kernel_initializer)
        self._candidate_bias = self.add_weight("candidate/bias", [units], initializer=(
            self._bias_initializer or init_ops.zeros_initializer(self.dtype)))
        self.built = True

    def call(self, inputs, state):
        value = unary_math_ops.sigmoid(_linear(inputs, state, self._gate_kernel, self._gate_bias))
        r, u = concat_split_ops.split(value, 2, axis=1)
        candidate = self._activation(_linear(inputs, r * state, self._candidate_kernel, self._candidate_bias))
        new_h = u * state + (1 - u) * candidate
        return new_h, new_h


class BasicLSTMCell(LayerRNNCell):
    """LSTM without peepholes or projection; ``forget_bias`` is added to the forget gate's pre-activation."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if not state_is_tuple:
            _log.warning("%s: Using a concatenated state is slower and will soon be deprecated. Use "
                         "state_is_tuple=True.", self)
        self._num_units = int(num_units)
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        units = self._num_units
        return LSTMStateTuple(units, units) if self._state_is_tuple else 2 * units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(self, inputs_shape)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, 4 * self._num_units])
        self._bias = self.add_weight("bias", [4 * self._num_units],
                                     initializer=init_ops.zeros_initializer(self.dtype))
        self.built = True

    def call(self, inputs, state):
        sigmoid = unary_math_ops.sigmoid
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = concat_split_ops.split(state, 2, axis=1)
        i, j, f, o = concat_split_ops.split(_linear(inputs, h, self._kernel, self._bias), 4, axis=1)
        new_c = math_ops.add(math_ops.multiply(c, sigmoid(math_ops.add(f, self._forget_bias))),
                             math_ops.multiply(sigmoid(i), self._activation(j)))
        new_h = math_ops.multiply(self._activation(new_c), sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else concat_split_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """LSTM with optional peepholes (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), cell clipping and a projection
    of the output (``projection/kernel``, ``num_proj``, ``proj_clip``); the state is (c, m)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=None, num_proj_shards=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if not state_is_tuple:
            _log.warning("%s: Using a concatenated state is slower and will soon be deprecated. Use "
                         "state_is_tuple=True.", self)
        if num_unit_shards is not None or num_proj_shards is not None:
            _log.warning("%s: The num_unit_shards and proj_unit_shards parameters are deprecated and will be "
                         "removed in Jan 2017. Use a variable scope with a partitioner instead.", self)
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = None if num_proj is None else int(num_proj)
        self._proj_clip = proj_clip
        self._num_unit_shards, self._num_proj_shards = num_unit_shards, num_proj_shards
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        units, out = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(units, out) if self._state_is_tuple else units + out

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(self, inputs_shape)
        units = self._num_units
        h_depth = self._num_proj or units
        shards = fixed_size_partitioner(self._num_unit_shards) if self._num_unit_shards is not None else None
        self._kernel = self.add_weight("kernel", [depth + h_depth, 4 * units], initializer=self._initializer,
                                       partitioner=shards)
        self._bias = self.add_weight("bias", [4 * units], initializer=init_ops.zeros_initializer(self.dtype))
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", [units], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", [units], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", [units], initializer=self._initializer)
        if self._num_proj is not None:
            proj_shards = fixed_size_partitioner(self._num_proj_shards) if self._num_proj_shards is not None else None
            self._proj_kernel = self.add_weight("projection/kernel", [units, self._num_proj],
                                                initializer=self._initializer, partitioner=proj_shards)
        self.built = True

    def call(self, inputs, state):
        sigmoid = unary_math_ops.sigmoid
        units, num_proj = self._num_units, self._num_proj or self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = slicing_ops.slice(state, [0, 0], [-1, units])
            m_prev = slicing_ops.slice(state, [0, units], [-1, num_proj])
        if inputs.shape.with_rank(2)[1].value is None:
            raise ValueError(f"Could not infer input size from inputs.get_shape()[-1] (inputs {inputs.name}, "
                             f"shape {inputs.shape})")
        i, j, f, o = concat_split_ops.split(_linear(inputs, m_prev, self._kernel, self._bias), 4, axis=1)
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = comparison_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = matmul_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = comparison_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else concat_split_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Cells stacked: each one's output is the next one's input; cell i's variables are in ``cell_<i>/``."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        if len({id(cell) for cell in cells}) < len(cells):
            _log.warning("At least two cells provided to MultiRNNCell are the same object and will share weights.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in self._cells):
            raise ValueError(f"Some cells return tuples of states, but the flag state_is_tuple is not set. State "
                             f"sizes are: {[c.state_size for c in self._cells]}")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with graph_mod.name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return zero_state_tensors(self.state_size, batch_size, dtype)

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for cell in self._cells for w in getattr(cell, "trainable_weights", [])]

    @property
    def non_trainable_weights(self):
        weights = [w for cell in self._cells for w in getattr(cell, "non_trainable_weights", [])]
        if not self.trainable:
            return [w for cell in self._cells for w in getattr(cell, "trainable_weights", [])] + weights
        return weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    def call(self, inputs, state):
        position = 0
        current = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_nested(state):
                        raise ValueError(f"Expected state to be a tuple of length {len(self.state_size)}, but "
                                         f"received: {state}")
                    cell_state = state[i]
                else:
                    cell_state = slicing_ops.slice(state, [0, position], [-1, cell.state_size])
                    position += cell.state_size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return current, tuple(new_states)
        return current, concat_split_ops.concat(new_states, 1)
