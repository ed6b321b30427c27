"""``dynamic_rnn``, ``bidirectional_dynamic_rnn`` and ``raw_rnn``: a cell run over time inside ``tf.while_loop``.

The inputs are read from a TensorArray and the outputs written to one, so the graph holds one copy of the cell
whatever the sequence length; gradients flow back through the loop. Scopes and variable names are TF 1.15's
(``rnn/<cell>/kernel``, ``bidirectional_rnn/fw/...``).
"""

import numbers

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, nest, tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops, check_ops, comparison_ops, concat_split_ops, fill_ops, reduction_ops, shape_ops, transpose_ops,
    variable_scope as vs,
)
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.ops.while_loop import while_loop
from tensorweave.rnn.cell import assert_like_rnncell, state_shape, static_state_shape
from tensorweave.rnn.step import (
    as_state, best_effort_batch_size, infer_state_dtype, lengths_vector, rnn_step, transpose_batch_time, zero_output,
)

__all__ = ["bidirectional_dynamic_rnn", "dynamic_rnn", "raw_rnn"]


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """Runs ``cell`` over ``inputs`` ([batch, time, ...], or [time, batch, ...] with ``time_major``); returns
    ``(outputs, final_state)``. With ``sequence_length``, outputs past each entry's length are zero and its
    state is the one at its last step. ``dtype`` is needed when no ``initial_state`` is given."""
    assert_like_rnncell("cell", cell)
    with vs.variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not flat_input:
            raise ValueError("dynamic_rnn: inputs must not be empty")
        if not time_major:
            flat_input = [transpose_batch_time(x) for x in flat_input]
        if sequence_length is not None:
            sequence_length = array_ops.identity(lengths_vector(sequence_length), name="sequence_length")
        batch_size = best_effort_batch_size(flat_input, 1)
        if initial_state is not None:
            state = as_state(initial_state)
        else:
            if not dtype:
                raise ValueError("If there is no initial_state, you must give a dtype.")
            state = cell.get_initial_state(batch_size=batch_size, dtype=dtype) if hasattr(
                cell, "get_initial_state") else cell.zero_state(batch_size, dtype)
        if sequence_length is not None:
            sequence_length = _checked_lengths(sequence_length, batch_size)
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, parallel_iterations or 32, swap_memory,
                                                 sequence_length, dtype)
        if not time_major:
            outputs = nest.map_structure(transpose_batch_time, outputs)
        return outputs, final_state


def _checked_lengths(sequence_length, batch_size):
    """``sequence_length``, checked (statically, or when run) to have one entry per batch element."""
    static = sequence_length.shape
    if static.ndims == 1 and static[0].value is not None and isinstance(batch_size, numbers.Integral):
        if static[0].value != batch_size:
            raise ValueError(f"Expected shape for Tensor {sequence_length.name} is [{batch_size}] but saw shape: "
                             f"{static}")
        return sequence_length
    check = check_ops.assert_equal(shape_ops.shape(sequence_length)[0], batch_size, message=(
        f"sequence_length ({sequence_length.name}) must have one length per batch element"))
    with graph_mod.control_dependencies([check]):
        return array_ops.identity(sequence_length, name="CheckSeqLen")


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, swap_memory, sequence_length, dtype):
    """The loop over time of time-major ``inputs``: ``(outputs [time, batch, ...], final_state)``."""
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    time_steps = shape_ops.shape(flat_input[0])[0]
    batch_size = best_effort_batch_size(flat_input, 1)
    shapes = [x.shape.with_rank_at_least(3) for x in flat_input]
    const_time_steps, const_batch_size = shapes[0][0].value, shapes[0][1].value
    for shape, value in zip(shapes, flat_input):
        if not shape[2:].is_fully_defined():
            raise ValueError(f"Input size (depth of inputs) must be accessible via shape inference, but saw value "
                             f"None: input {value.name} has shape {shape}")
        if shape[0].value != const_time_steps:
            raise ValueError("Time steps is not the same for all the elements in the input in a batch.")
        if shape[1].value != const_batch_size:
            raise ValueError("Batch_size is not the same for all the elements in the input.")
    state_dtype = infer_state_dtype(dtype, initial_state)
    zeros = zero_output(batch_size, cell.output_size, state_dtype)
    time = array_ops.constant(0, dtype=dtypes.int32, name="time")
    with graph_mod.name_scope("dynamic_rnn") as base_name:
        pass
    output_ta = tuple(TensorArray(state_dtype, size=time_steps, tensor_array_name=f"{base_name}output_{i}",
                                  element_shape=static_state_shape(const_batch_size, size))
                      for i, size in enumerate(flat_output_size))
    input_ta = tuple(TensorArray(x.dtype, size=time_steps, element_shape=x.shape[1:],
                                 tensor_array_name=f"{base_name}input_{i}").unstack(x)
                     for i, x in enumerate(flat_input))

    def time_step(time, output_ta_t, state):
        input_t = [ta.read(time) for ta in input_ta]
        for value, shape in zip(input_t, shapes):
            value.set_shape(shape[1:])
        input_t = nest.pack_sequence_as(inputs, input_t)

        def call_cell():
            return cell(input_t, state)
        if sequence_length is not None:
            output, new_state = rnn_step(time, sequence_length, zeros, state, call_cell)
        else:
            output, new_state = call_cell()
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, nest.flatten(output)))
        return time + 1, output_ta_t, new_state

    _, final_ta, final_state = while_loop(lambda time, *_: comparison_ops.less(time, time_steps), time_step,
                                          (time, output_ta, initial_state), parallel_iterations=parallel_iterations,
                                          swap_memory=swap_memory)
    outputs = []
    for ta, size in zip(final_ta, flat_output_size):
        output = ta.stack()
        output.set_shape(tensor_shape.TensorShape([const_time_steps]).concatenate(
            static_state_shape(const_batch_size, size)))
        outputs.append(output)
    return nest.pack_sequence_as(cell.output_size, outputs), final_state


def _reverse(value, seq_lengths, seq_axis, batch_axis):
    if seq_lengths is not None:
        return transpose_ops.reverse_sequence(value, seq_lengths=seq_lengths, seq_axis=seq_axis, batch_axis=batch_axis)
    return transpose_ops.reverse(value, axis=[seq_axis])


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """A forward and a backward ``dynamic_rnn`` (each in its scope, ``fw``/``bw``); the backward one reads each
    sequence reversed within its length. Returns ``((output_fw, output_bw), (state_fw, state_bw))``, both outputs
    in the inputs' time order."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse_all(value):
        return nest.map_structure(lambda x: _reverse(x, sequence_length, time_axis, batch_axis), value)
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length=sequence_length,
                                              initial_state=initial_state_fw, dtype=dtype,
                                              parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                                              time_major=time_major, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            reversed_output, state_bw = dynamic_rnn(cell_bw, reverse_all(inputs), sequence_length=sequence_length,
                                                    initial_state=initial_state_bw, dtype=dtype,
                                                    parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                                                    time_major=time_major, scope=bw_scope)
    return (output_fw, reverse_all(reversed_output)), (state_fw, state_bw)


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """The loop with the user in charge: ``loop_fn(time, cell_output, cell_state, loop_state)`` returns
    ``(finished, next_input, next_cell_state, emit_output, next_loop_state)``; called first with
    ``cell_output=None`` to give the initial input and state. Returns ``(emit_ta, final_state,
    final_loop_state)``; finished entries emit zeros and keep their state."""
    assert_like_rnncell("cell", cell)
    if not callable(loop_fn):
        raise TypeError(f"loop_fn must be a callable, got {loop_fn!r}")
    with vs.variable_scope(scope or "rnn"):
        time = array_ops.constant(0, dtype=dtypes.int32)
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(time, None, None, None)
        loop_state = init_loop_state if init_loop_state is not None else array_ops.constant(0, dtype=dtypes.int32)
        flat_input = [convert_to_tensor(x) for x in nest.flatten(next_input)]
        static_batch = tensor_shape.Dimension(None)
        for value in flat_input:
            static_batch = static_batch.merge_with(value.shape.with_rank_at_least(1)[0])
        const_batch_size = static_batch.value
        batch_size = const_batch_size if const_batch_size is not None else shape_ops.shape(flat_input[0])[0]
        if not nest.same_structure(initial_state, cell.state_size):
            raise ValueError(f"raw_rnn: the initial state {nest.describe(initial_state)} from loop_fn does not match "
                             f"the cell's state_size {nest.describe(cell.state_size)}")
        state = nest.map_structure(convert_to_tensor, initial_state)
        flat_state = nest.flatten(state)
        if emit_structure is not None:
            flat_emit = nest.flatten(emit_structure)
            flat_emit_size = [e.shape if e.shape.is_fully_defined() else shape_ops.shape(e) for e in flat_emit]
            flat_emit_dtypes = [e.dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            flat_emit_size = nest.flatten(emit_structure)
            flat_emit_dtypes = [flat_state[0].dtype] * len(flat_emit_size)
        flat_emit_ta = [TensorArray(dtype, dynamic_size=True, size=0, name=f"rnn_output_{i}", element_shape=(
            tensor_shape.TensorShape([const_batch_size]).concatenate(_static_size(size))))
            for i, (dtype, size) in enumerate(zip(flat_emit_dtypes, flat_emit_size))]
        emit_ta = nest.pack_sequence_as(emit_structure, flat_emit_ta)
        zero_emit = nest.pack_sequence_as(emit_structure, [
            fill_ops.zeros(_batch_shape(batch_size, size), dtype)
            for size, dtype in zip(flat_emit_size, flat_emit_dtypes)])

        def condition(unused_time, elements_finished, *_):
            return comparison_ops.logical_not(reduction_ops.reduce_all(elements_finished))

        def body(time, elements_finished, current_input, emit_ta, state, loop_state):
            next_output, cell_state = cell(current_input, state)
            _same("the cell's new state", cell_state, "its state", state)
            _same("the cell's output", next_output, "its output_size", cell.output_size)
            next_time = time + 1
            next_finished, next_input, next_state, emit_output, next_loop_state = loop_fn(
                next_time, next_output, cell_state, loop_state)
            _same("loop_fn's next state", next_state, "the state", state)
            _same("loop_fn's next input", next_input, "the input", current_input)
            _same("loop_fn's emit output", emit_output, "the emit structure", emit_ta)
            loop_state = loop_state if next_loop_state is None else next_loop_state

            def copy_some_through(current, candidate):
                def copy(cur, cand):
                    if isinstance(cur, TensorArray) or cur.shape.ndims == 0:
                        return cand
                    return comparison_ops.where(elements_finished, cur, cand)
                return nest.map_structure(copy, current, candidate)
            emit_output = copy_some_through(zero_emit, emit_output)
            next_state = copy_some_through(state, next_state)
            emit_ta = nest.map_structure(lambda ta, emit: ta.write(time, emit), emit_ta, emit_output)
            elements_finished = comparison_ops.logical_or(elements_finished, next_finished)
            return next_time, elements_finished, next_input, emit_ta, next_state, loop_state

        returned = while_loop(condition, body, [time, finished, next_input, emit_ta, state, loop_state],
                              parallel_iterations=parallel_iterations or 32, swap_memory=swap_memory)
        emit_ta, final_state, final_loop_state = returned[-3:]
        return emit_ta, final_state, (final_loop_state if init_loop_state is not None else None)


def _same(what, value, against, reference):
    if not nest.same_structure(value, reference):
        raise ValueError(f"raw_rnn: {what} {nest.describe(value)} does not have the structure of {against} "
                         f"{nest.describe(reference)}")


def _static_size(size):
    if isinstance(size, numbers.Integral):
        return tensor_shape.TensorShape([int(size)])
    if isinstance(size, tensor_shape.TensorShape):
        return size
    return tensor_shape.TensorShape(None) if hasattr(size, "op") else tensor_shape.as_shape(size)


def _batch_shape(batch_size, size):
    if hasattr(size, "op"):  # a dynamic shape: [batch] + size
        batch = shape_ops.reshape(convert_to_tensor(batch_size, dtype=dtypes.int32), [1])
        return concat_split_ops.concat([batch, size], 0)
    return state_shape(batch_size, size)[0]
