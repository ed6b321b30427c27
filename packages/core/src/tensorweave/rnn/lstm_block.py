"""contrib.rnn's block LSTMs: ``LSTMBlockCell`` (one step, a drop-in for ``LSTMCell``) and ``LSTMBlockFusedCell``
(a whole time-major sequence in one call). TF 1.15 runs them as single ops (LSTMBlockCell, BlockLSTM); here they are
the same step composed of core ops, so their numbers and gradients are ``LSTMCell``'s for the same weights.

Variables as TF 1.15's contrib names them: ``lstm_cell/kernel`` (``[input + units, 4 * units]``, gates i, ci, f, o as
LSTMCell's i, j, f, o), ``bias`` (zeros) and with peepholes ``w_i_diag``, ``w_f_diag``, ``w_o_diag`` (made in that
order); the fused cell's scope is ``lstm_fused_cell``.
"""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.layers.core import Layer
from tensorweave.ops import comparison_ops, concat_split_ops, init_ops, unary_math_ops
from tensorweave.rnn.cell import LayerRNNCell, LSTMStateTuple, RNNCell
from tensorweave.rnn.cells import _linear
from tensorweave.rnn.dynamic import dynamic_rnn

__all__ = ["LSTMBlockCell", "LSTMBlockFusedCell"]


def _make_weights(layer, input_size, units, use_peephole):
    layer._kernel = layer.add_weight("kernel", [input_size + units, 4 * units])
    layer._bias = layer.add_weight("bias", [4 * units], initializer=init_ops.constant_initializer(0.0))
    if use_peephole:
        layer._w_i_diag, layer._w_f_diag, layer._w_o_diag = (layer.add_weight(n, [units])
                                                             for n in ("w_i_diag", "w_f_diag", "w_o_diag"))


def _step(layer, inputs, state):
    """One LSTM step with ``layer``'s weights, as TF's LSTMBlockCell kernel computes it."""
    sigmoid, tanh = unary_math_ops.sigmoid, unary_math_ops.tanh
    if len(state) != 2:
        raise ValueError(f"{type(layer).__name__}: expecting the state to be a (cell state, output) pair, got "
                         f"{len(state)} parts")
    cs_prev, h_prev = state
    i, ci, f, o = concat_split_ops.split(_linear(inputs, h_prev, layer._kernel, layer._bias), 4, axis=1)
    if layer._use_peephole:
        i, f = i + cs_prev * layer._w_i_diag, f + cs_prev * layer._w_f_diag
    cs = sigmoid(i) * tanh(ci) + sigmoid(f + layer._forget_bias) * cs_prev
    if layer._cell_clip is not None and layer._cell_clip > 0:
        cs = comparison_ops.clip_by_value(cs, -layer._cell_clip, layer._cell_clip)
    if layer._use_peephole:
        o = o + cs * layer._w_o_diag
    h = sigmoid(o) * tanh(cs)
    return h, LSTMStateTuple(cs, h)


class LSTMBlockCell(LayerRNNCell):
    """TF 1.15's ``tf.contrib.rnn.LSTMBlockCell``: ``LSTMCell``'s numbers (peepholes with ``use_peephole``,
    ``cell_clip``, ``forget_bias``) with its variable names, no projection; the state is (c, h)."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, dtype=None, reuse=None,
                 name="lstm_cell"):
        super().__init__(_reuse=reuse, name=name, dtype=dtype)
        self._num_units = int(num_units)
        self._forget_bias = forget_bias
        self._cell_clip = cell_clip
        self._use_peephole = use_peephole

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        shape = tensor_shape.as_shape(inputs_shape)
        if shape.ndims != 2 or shape[1].value is None:
            raise ValueError(f"LSTMBlockCell: expecting inputs of shape [batch, depth] with a known depth, got "
                             f"{shape}")
        _make_weights(self, shape[1].value, self._num_units, self._use_peephole)
        self.built = True

    def call(self, inputs, state):
        return _step(self, inputs, state)


class _FusedStep(RNNCell):
    """The fused cell's step inside ``dynamic_rnn``: its weights, no variables of its own."""

    def __init__(self, fused):
        super().__init__()
        self._fused = fused

    @property
    def state_size(self):
        return LSTMStateTuple(self._fused.num_units, self._fused.num_units)

    @property
    def output_size(self):
        return self._fused.num_units

    def __call__(self, inputs, state, scope=None):
        return _step(self._fused, inputs, state)


class LSTMBlockFusedCell(Layer):
    """TF 1.15's ``tf.contrib.rnn.LSTMBlockFusedCell``: ``cell(inputs, initial_state=None, dtype=None,
    sequence_length=None)`` runs a ``[time, batch, depth]`` tensor (or a list of ``[batch, depth]`` steps) and
    returns (outputs, LSTMStateTuple(c, h)); outputs past a sequence's length are zeros and its final state is
    the one at its last step (the initial state for a length of 0)."""

    _base_name = "lstm_fused_cell"

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, reuse=None, dtype=None,
                 name="lstm_fused_cell"):
        super().__init__(_reuse=reuse, name=name, dtype=dtype)
        self._num_units = int(num_units)
        self._forget_bias = forget_bias
        self._cell_clip = cell_clip
        self._use_peephole = use_peephole

    @property
    def num_units(self):
        return self._num_units

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
        is_list = isinstance(inputs, list)
        if is_list:
            inputs = concat_split_ops.stack(inputs)
        outputs, state = super().__call__(inputs, initial_state=initial_state, dtype=dtype,
                                          sequence_length=sequence_length)
        return (concat_split_ops.unstack(outputs) if is_list else outputs), state

    def build(self, input_shape):
        shape = tensor_shape.as_shape(input_shape)
        if shape.ndims != 3 or shape[2].value is None:
            raise ValueError(f"LSTMBlockFusedCell: expecting inputs of shape [time, batch, depth] with a known "
                             f"depth, got {shape}")
        _make_weights(self, shape[2].value, self._num_units, self._use_peephole)
        self.built = True

    def call(self, inputs, initial_state=None, dtype=None, sequence_length=None):
        if initial_state is None and dtype is None:
            raise ValueError("LSTMBlockFusedCell: either initial_state or dtype needs to be specified")
        if initial_state is not None:
            if len(initial_state) != 2:
                raise ValueError("LSTMBlockFusedCell: expecting initial_state to be a (cell state, output) pair")
            initial_state = LSTMStateTuple(*(convert_to_tensor(s) for s in initial_state))
        if sequence_length is not None:
            sequence_length = convert_to_tensor(sequence_length)
            if sequence_length.dtype not in (dtypes.int32, dtypes.int64):
                raise TypeError(f"LSTMBlockFusedCell: sequence_length must be int32 or int64, got "
                                f"{sequence_length.dtype.name}")
        return dynamic_rnn(_FusedStep(self), inputs, sequence_length=sequence_length, initial_state=initial_state,
                           dtype=dtype or initial_state[0].dtype, time_major=True, scope="BlockLSTM")
