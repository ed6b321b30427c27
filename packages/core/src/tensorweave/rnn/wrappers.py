"""Cell wrappers: ``DropoutWrapper``, ``ResidualWrapper`` and ``DeviceWrapper``.

A wrapper calls its cell's ``__call__`` directly (no scope of its own), so the wrapped cell's variables keep the
names they would have unwrapped (``rnn/basic_lstm_cell/kernel``), as in TF1.
"""

import hashlib
import numbers

from tensorweave.framework import graph as graph_mod, nest, tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import math_ops, nn_ops, random_ops, unary_math_ops
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.rnn.cell import LSTMStateTuple, RNNCell, assert_like_rnncell

__all__ = ["DeviceWrapper", "DropoutWrapper", "ResidualWrapper"]


class _Wrapper(RNNCell):
    """Delegates sizes, zero state and weights to ``cell``; ``_call_wrapped_cell`` adds the wrapping."""

    def __init__(self, cell, **kwargs):
        super().__init__(**kwargs)
        assert_like_rnncell("cell", cell)
        self.cell = cell

    def __call__(self, inputs, state, scope=None):
        return self._call_wrapped_cell(inputs, state, cell_call_fn=self.cell.__call__, scope=scope)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        raise NotImplementedError

    @property
    def wrapped_cell(self):
        return self.cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    def zero_state(self, batch_size, dtype):
        with graph_mod.name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    @property
    def trainable_weights(self):
        return list(getattr(self.cell, "trainable_weights", [])) if self.trainable else []

    @property
    def non_trainable_weights(self):
        weights = list(getattr(self.cell, "non_trainable_weights", []))
        return weights if self.trainable else list(getattr(self.cell, "trainable_weights", [])) + weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights


def _default_dropout_state_filter_visitor(substate):
    """Drop out every part of the state but an LSTM's memory ``c`` (and never a TensorArray)."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    if isinstance(substate, TensorArray):
        return False
    return True


def _dropout_decisions(filter_fn, value):
    """One bool per leaf of ``value`` (in flatten order): ``filter_fn`` is asked at each level, and a level it
    answers False for is left alone entirely, as TF's ``get_traverse_shallow_structure``."""
    decision = filter_fn(value)
    if not nest.is_nested(value) or isinstance(value, TensorArray):
        if not isinstance(decision, bool):
            raise TypeError(f"dropout_state_filter_visitor returned {decision!r} for a leaf; it must be a bool")
        return [decision]
    children = list(value.values()) if isinstance(value, dict) else list(value)
    if isinstance(decision, bool):
        decisions = [decision] * len(children)
    else:
        decisions = list(decision.values()) if isinstance(decision, dict) else list(decision)
        if len(decisions) != len(children):
            raise ValueError(f"dropout_state_filter_visitor returned {decision!r} for {value!r}: it must be a bool "
                             f"or a structure of bools one level deep like the state")
    flat = []
    for child, keep_going in zip(children, decisions):
        flat += _dropout_decisions(filter_fn, child) if keep_going else [False] * len(nest.flatten(child))
    return flat


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and new state (``*_keep_prob``: a float or a scalar tensor, e.g. a
    placeholder fed 1.0 for evaluation). ``variational_recurrent=True`` draws one mask per run and uses it at
    every step (then ``dtype``, and ``input_size`` for input dropout, are needed)."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError(f"dropout_state_filter_visitor must be callable, got {dropout_state_filter_visitor!r}")
        self._dropout_state_filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        with graph_mod.name_scope("DropoutWrapperInit"):
            for prob, attr in ((input_keep_prob, "input_keep_prob"), (state_keep_prob, "state_keep_prob"),
                               (output_keep_prob, "output_keep_prob")):
                tensor = convert_to_tensor(prob)
                const = constant_value(tensor)
                if const is not None:
                    if const < 0 or const > 1:
                        raise ValueError(f"Parameter {attr} must be between 0 and 1: {const}")
                    setattr(self, f"_{attr}", float(const))
                else:
                    setattr(self, f"_{attr}", tensor)
        self._variational_recurrent = variational_recurrent
        self._input_size = input_size
        self._seed = seed
        self._recurrent_input_noise = self._recurrent_state_noise = self._recurrent_output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")

            def noise(prefix, sizes):
                return [random_ops.random_uniform([1] + tensor_shape.as_shape(
                    [s] if isinstance(s, numbers.Integral) else s).as_list(), seed=self._gen_seed(prefix, i),
                    dtype=dtype) for i, s in enumerate(nest.flatten(sizes))]
            if not isinstance(self._input_keep_prob, numbers.Real) or self._input_keep_prob < 1.0:
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                     "input_size must be provided")
                self._recurrent_input_noise = noise("input", input_size)
            self._recurrent_state_noise = noise("state", cell.state_size)
            self._recurrent_output_noise = noise("output", cell.output_size)

    def _gen_seed(self, salt_prefix, index):
        """TF1's per-part seed: the first 8 hex digits of md5(str(seed) + salt)."""
        if self._seed is None:
            return None
        digest = hashlib.md5(f"{self._seed}{salt_prefix}_{index}".encode("utf-8")).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _dropout(self, values, salt_prefix, recurrent_noise, keep_prob, decisions=None):
        flat = nest.flatten(values)
        decisions = decisions or [True] * len(flat)
        out = []
        for i, (value, drop) in enumerate(zip(flat, decisions)):
            if not drop:
                out.append(value)
            elif not self._variational_recurrent:
                out.append(nn_ops.dropout(value, keep_prob=keep_prob, seed=self._gen_seed(salt_prefix, i)))
            else:
                kept = unary_math_ops.floor(keep_prob + recurrent_noise[i])
                result = math_ops.divide(value, keep_prob) * kept
                result.set_shape(value.shape)
                out.append(result)
        return nest.pack_sequence_as(values, out)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        def should_dropout(p):
            return not isinstance(p, float) or p < 1
        if should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise, self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if should_dropout(self._state_keep_prob):
            decisions = _dropout_decisions(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise, self._state_keep_prob,
                                      decisions)
        if should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise, self._output_keep_prob)
        return output, new_state


class ResidualWrapper(_Wrapper):
    """Output ``inputs + cell_output`` (or ``residual_fn(inputs, outputs)``); the state is the cell's."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)

        def default_residual_fn(inputs, outputs):
            if not nest.same_structure(inputs, outputs):
                raise ValueError(f"ResidualWrapper: the inputs {nest.describe(inputs)} and the cell's outputs "
                                 f"{nest.describe(outputs)} have different structures")

            def add(inp, out):
                inp.shape.assert_is_compatible_with(out.shape)
                return inp + out
            return nest.map_structure(add, inputs, outputs)
        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state


class DeviceWrapper(_Wrapper):
    """Builds the cell's step (and its zero state) under ``tf.device(device)``."""

    def __init__(self, cell, device, **kwargs):
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with graph_mod.name_scope(type(self).__name__ + "ZeroState"):
            with graph_mod.device(self._device):
                return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with graph_mod.device(self._device):
            return cell_call_fn(inputs, state, **kwargs)

