"""What the RNN drivers share: one step with sequence lengths, the state's dtype, the batch size, and moving
the time axis."""

from tensorweave import dtypes
from tensorweave.framework import nest, tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import comparison_ops, fill_ops, shape_ops, transpose_ops, unary_math_ops
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.rnn.cell import state_shape


def rnn_step(time, sequence_length, zero_output, state, call_cell):
    """``call_cell()`` for batch entries still inside their sequence; past its length an entry gets a zero output
    and keeps its state (TF1's ``_rnn_step``; its shortcuts when all or none are done give the same numbers)."""
    new_output, new_state = call_cell()
    if not nest.same_structure(zero_output, new_output):
        raise ValueError(f"the cell's output {nest.describe(new_output)} does not match its output_size "
                         f"{nest.describe(zero_output)}")
    if not nest.same_structure(state, new_state):
        raise ValueError(f"the cell's new state {nest.describe(new_state)} does not match the state it was given "
                         f"{nest.describe(state)}")
    done = comparison_ops.greater_equal(time, sequence_length)

    def copy_one_through(old, new):
        if isinstance(old, TensorArray) or old.shape.ndims == 0:
            return new
        return comparison_ops.where(done, old, new)
    return (nest.map_structure(copy_one_through, zero_output, new_output),
            nest.map_structure(copy_one_through, state, new_state))


def as_state(state):
    """A state given as Python or numpy values, as tensors (TensorArrays in a state stay as they are)."""
    return nest.map_structure(lambda s: s if isinstance(s, TensorArray) else convert_to_tensor(s), state)


def infer_state_dtype(explicit_dtype, state):
    """``explicit_dtype``, else the state's one dtype (all its parts must agree)."""
    if explicit_dtype is not None:
        return dtypes.as_dtype(explicit_dtype)
    flat = nest.flatten(state)
    if not flat:
        raise ValueError("Unable to infer dtype from empty state.")
    found = {x.dtype.base_dtype for x in flat}
    if len(found) != 1:
        raise ValueError(f"State has tensors of different inferred dtypes ({sorted(d.name for d in found)}); unable "
                         f"to infer a single representative dtype: pass dtype=")
    return flat[0].dtype.base_dtype


def zero_output(batch_size, output_size, dtype, static_batch=None):
    """Zeros ``[batch_size] + s`` for each size in ``output_size``."""
    def zeros(size):
        shape, static = state_shape(batch_size, size)
        value = fill_ops.zeros(shape, dtype=dtype)
        value.set_shape(tensor_shape.TensorShape([static_batch]).concatenate(static[1:]) if static_batch else static)
        return value
    return nest.map_structure(zeros, output_size)


def best_effort_batch_size(flat_input, batch_axis):
    """The static batch size when some input knows it, else the first input's dynamic one."""
    for value in flat_input:
        shape = value.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError(f"Expected input tensor {value.name} to have rank at least 2, got shape {shape}")
        if shape[batch_axis].value is not None:
            return shape[batch_axis].value
    return shape_ops.shape(flat_input[0])[batch_axis]


def transpose_batch_time(value):
    """Swaps the first two axes of a tensor of rank >= 2 (batch-major <-> time-major)."""
    value = convert_to_tensor(value)
    rank = value.shape.ndims
    if rank is None:
        raise ValueError(f"dynamic_rnn needs inputs of known rank to move the time axis; {value.name} has unknown "
                         f"rank: give it a static shape (e.g. with set_shape)")
    if rank < 2:
        raise ValueError(f"Expected input tensor {value.name} to have rank at least 2, but saw shape: {value.shape}")
    result = transpose_ops.transpose(value, [1, 0] + list(range(2, rank)))
    result.set_shape(tensor_shape.TensorShape([value.shape[1], value.shape[0]]).concatenate(value.shape[2:]))
    return result


def lengths_vector(sequence_length):
    """``sequence_length`` as int32, refusing anything but a vector."""
    lengths = unary_math_ops.cast(convert_to_tensor(sequence_length), dtypes.int32)
    if lengths.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector of length batch_size, but saw shape: {lengths.shape}")
    return lengths
