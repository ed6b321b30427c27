"""``static_rnn`` and ``static_bidirectional_rnn``: the cell unrolled in Python over a list of time steps.

One copy of the cell per step, sharing its variables (the scope turns to reuse after the first step, as in TF1).
"""

from tensorweave.framework import nest, tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import concat_split_ops, shape_ops, transpose_ops, variable_scope as vs
from tensorweave.rnn.cell import assert_like_rnncell
from tensorweave.rnn.step import as_state, infer_state_dtype, lengths_vector, rnn_step, zero_output

__all__ = ["static_bidirectional_rnn", "static_rnn"]


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """``inputs`` is a list of ``[batch, ...]`` tensors, one per step; returns ``(outputs, final_state)`` with
    ``outputs`` a list. With ``sequence_length`` past-the-end outputs are zero and states copied through."""
    assert_like_rnncell("cell", cell)
    if not nest.is_nested(inputs):
        raise TypeError(f"static_rnn: inputs must be a sequence (a list of tensors, one per step), got {inputs!r}")
    if not inputs:
        raise ValueError("static_rnn: inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        inputs = [nest.map_structure(convert_to_tensor, step) for step in inputs]
        first = nest.flatten(inputs[0])[0]
        if first.shape.ndims != 1:
            fixed_batch = first.shape.with_rank_at_least(2)[0]
            for value in nest.flatten(inputs):
                shape = value.shape.with_rank_at_least(2)
                fixed_batch = fixed_batch.merge_with(shape[0])
                for i, size in enumerate(shape[1:].dims):
                    if size.value is None:
                        raise ValueError(f"Input size (dimension {i} of inputs) must be accessible via shape "
                                         f"inference, but saw value None ({value.name}, shape {shape}).")
        else:
            fixed_batch = first.shape.with_rank_at_least(1)[0]
        batch_size = fixed_batch.value if fixed_batch.value is not None else shape_ops.shape(first)[0]
        if initial_state is not None:
            state = as_state(initial_state)
        else:
            if not dtype:
                raise ValueError("If no initial_state is provided, dtype must be specified")
            state = cell.zero_state(batch_size, dtype)
        if sequence_length is not None:
            sequence_length = lengths_vector(sequence_length)
            zeros = zero_output(batch_size, cell.output_size, infer_state_dtype(dtype, state), fixed_batch.value)
        for time, step_input in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(step_input=step_input, state=state):
                return cell(step_input, state)
            if sequence_length is not None:
                output, state = rnn_step(time, sequence_length, zeros, state, call_cell)
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


def _reverse_seq(input_seq, lengths):
    """The list of steps reversed, each sequence within its own length when ``lengths`` is given."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_steps = [nest.flatten(step) for step in input_seq]
    reversed_parts = []
    for parts in zip(*flat_steps):
        static = tensor_shape.TensorShape(None)
        for part in parts:
            static = static.merge_with(part.shape)
        stacked = concat_split_ops.stack(list(parts))
        flipped = transpose_ops.reverse_sequence(stacked, seq_lengths=lengths_vector(lengths), seq_axis=0,
                                                 batch_axis=1)
        unstacked = concat_split_ops.unstack(flipped, num=len(parts))
        for step in unstacked:
            step.set_shape(static)
        reversed_parts.append(unstacked)
    return [nest.pack_sequence_as(input_seq[t], [parts[t] for parts in reversed_parts])
            for t in range(len(input_seq))]


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None, initial_state_bw=None, dtype=None,
                             sequence_length=None, scope=None):
    """A forward and a backward ``static_rnn`` (scopes ``fw``/``bw``); returns ``(outputs, state_fw, state_bw)``
    with each output the concatenation of both directions' outputs at that step."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not nest.is_nested(inputs):
        raise TypeError(f"static_bidirectional_rnn: inputs must be a sequence, got {inputs!r}")
    if not inputs:
        raise ValueError("static_bidirectional_rnn: inputs must not be empty")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length,
                                             scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq([nest.map_structure(convert_to_tensor, x) for x in inputs],
                                           sequence_length)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length,
                                       scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    flat = [concat_split_ops.concat([fw, bw], 1) for fw, bw in zip(nest.flatten(output_fw), nest.flatten(output_bw))]
    return nest.pack_sequence_as(output_fw, flat), state_fw, state_bw
