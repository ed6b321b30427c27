"""``tf.contrib.rnn.stack_bidirectional_dynamic_rnn`` and ``stack_bidirectional_rnn``: bidirectional layers
stacked, each layer reading the previous layer's forward and backward outputs concatenated.

Layer i's variables are in ``stack_bidirectional_rnn/cell_<i>/`` (then ``bidirectional_rnn/fw/...`` for the
dynamic form, ``fw/...`` for the static one), as in TF1's contrib.
"""

from tensorweave.ops import concat_split_ops, variable_scope as vs
from tensorweave.rnn.dynamic import bidirectional_dynamic_rnn
from tensorweave.rnn.static import static_bidirectional_rnn

__all__ = ["stack_bidirectional_dynamic_rnn", "stack_bidirectional_rnn"]


def _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list) or not isinstance(cells_bw, list):
        raise ValueError(f"cells_fw and cells_bw must be lists of RNNCells, got {type(cells_fw).__name__} and "
                         f"{type(cells_bw).__name__}")
    if len(cells_fw) != len(cells_bw):
        raise ValueError(f"Forward and Backward cells must have the same depth, got {len(cells_fw)} and "
                         f"{len(cells_bw)}")
    for what, states in (("initial_states_fw", initial_states_fw), ("initial_states_bw", initial_states_bw)):
        if states is not None and (not isinstance(states, list) or len(states) != len(cells_fw)):
            raise ValueError(f"{what} must be a list of state tensors (one per layer)")


def _layer_states(states, i):
    return states[i] if states else None


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None,
                                    dtype=None, sequence_length=None, parallel_iterations=None, time_major=False,
                                    scope=None, swap_memory=False):
    """Returns ``(outputs, states_fw, states_bw)``: the last layer's outputs ([..., fw + bw depth]) and a tuple of
    each layer's final forward and backward states."""
    _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    layer = inputs
    with vs.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with vs.variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, layer, initial_state_fw=_layer_states(initial_states_fw, i),
                    initial_state_bw=_layer_states(initial_states_bw, i), sequence_length=sequence_length,
                    parallel_iterations=parallel_iterations, dtype=dtype, swap_memory=swap_memory,
                    time_major=time_major)
                layer = concat_split_ops.concat(outputs, 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None, dtype=None,
                            sequence_length=None, scope=None):
    """The unrolled form over a list of steps; returns ``(outputs, states_fw, states_bw)`` with ``outputs`` a
    list."""
    _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    if not inputs:
        raise ValueError("stack_bidirectional_rnn: inputs must not be empty")
    states_fw, states_bw = [], []
    layer = inputs
    with vs.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with vs.variable_scope(f"cell_{i}") as cell_scope:
                layer, state_fw, state_bw = static_bidirectional_rnn(
                    cell_fw, cell_bw, layer, initial_state_fw=_layer_states(initial_states_fw, i),
                    initial_state_bw=_layer_states(initial_states_bw, i), sequence_length=sequence_length,
                    dtype=dtype, scope=cell_scope)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)
