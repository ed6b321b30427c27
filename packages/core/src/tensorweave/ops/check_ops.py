"""tf.debugging's assertions (assert_equal, assert_positive, assert_rank, assert_type, ...), built on Assert with
TF1's messages.

Each returns an op to run (as a control dependency) that fails the step with InvalidArgumentError, printing the
message and the first ``summarize`` values. What is known while building is checked then, as in TF1: comparing two
constants that fail raises InvalidArgumentError, a wrong static rank ValueError, a wrong dtype TypeError; a rank or
dtype check that passes statically is a NoOp.
"""

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import comparison_ops, reduction_ops, shape_ops, unary_math_ops
from tensorweave.ops.control_flow_ops import no_op, with_dependencies
from tensorweave.ops.logging_ops import Assert

__all__ = ["assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
           "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative", "assert_non_positive",
           "assert_near", "assert_rank", "assert_rank_at_least", "assert_rank_in", "assert_type", "assert_integer",
           "assert_scalar", "assert_proper_iterable", "assert_same_float_dtype", "is_numeric_tensor",
           "is_non_decreasing", "is_strictly_increasing"]


def _message_prefix(message):
    return f"{message}.  " if message else ""


def _dtype_text(dtype):
    return f"<dtype: '{dtype.name}'>"


def _assert_static(condition, data):
    """TF1's build-time failure: the data joined by newlines, constant tensors shown by value."""
    if not condition:
        def text(x):
            value = constant_value(x) if isinstance(x, Tensor) else None
            return str(value) if value is not None else str(x)
        raise errors.InvalidArgumentError(None, None, "\n".join(text(x) for x in data))


# ---- elementwise comparisons --------------------------------------------------------------------------------------
def _binary_assert(sym, opname, op_func, static_func, x, y, data, summarize, message, name):
    with graph_mod.name_scope(name, opname, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", preferred_dtype=x.dtype)
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        condition = reduction_ops.reduce_all(op_func(x, y))
        x_static, y_static = constant_value(x), constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(bool(np.all(static_func(x_static, y_static))), data)
        return Assert(condition, data, summarize=summarize)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless x == y element-wise (broadcast); static when both are constants."""
    if x is y:
        return no_op(name=name or "assert_equal")
    return _binary_assert("==", "assert_equal", comparison_ops.equal, np.equal, x, y, data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless x != y for every element."""
    return _binary_assert("!=", "assert_none_equal", comparison_ops.not_equal, np.not_equal, x, y, data, summarize,
                          message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless x < y element-wise."""
    return _binary_assert("<", "assert_less", comparison_ops.less, np.less, x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless x <= y element-wise."""
    return _binary_assert("<=", "assert_less_equal", comparison_ops.less_equal, np.less_equal, x, y, data,
                          summarize, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless x > y element-wise."""
    return _binary_assert(">", "assert_greater", comparison_ops.greater, np.greater, x, y, data, summarize,
                          message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless x >= y element-wise."""
    return _binary_assert(">=", "assert_greater_equal", comparison_ops.greater_equal, np.greater_equal, x, y, data,
                          summarize, message, name)


def _sign_assert(sym, opname, compare, zero_first, x, data, summarize, message, name):
    message = _message_prefix(message)
    with graph_mod.name_scope(name, opname, [x]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message, f"Condition x {sym} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        return compare(zero, x, data=data, summarize=summarize) if zero_first else compare(x, zero, data=data,
                                                                                            summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless every element of x is > 0."""
    return _sign_assert(">", "assert_positive", assert_less, True, x, data, summarize, message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless every element of x is < 0."""
    return _sign_assert("<", "assert_negative", assert_less, False, x, data, summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless every element of x is >= 0."""
    return _sign_assert(">=", "assert_non_negative", assert_less_equal, True, x, data, summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless every element of x is <= 0."""
    return _sign_assert("<=", "assert_non_positive", assert_less_equal, False, x, data, summarize, message, name)


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """An op failing the step unless |x - y| < atol + rtol * |y| element-wise (default tolerances 10 * eps)."""
    message = _message_prefix(message)
    with graph_mod.name_scope(name, "assert_near", [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        real = dtypes.float32 if x.dtype is dtypes.complex64 else dtypes.float64 if x.dtype.is_complex else x.dtype
        eps = np.finfo(real.as_numpy_dtype).eps
        rtol = 10 * eps if rtol is None else rtol
        atol = 10 * eps if atol is None else atol
        if data is None:  # TF1 prints the tolerance tensors' reprs here; the numbers say more
            data = [message, f"x and y not equal to tolerance rtol = {_number(rtol, real)}, "
                             f"atol = {_number(atol, real)}", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        rtol = convert_to_tensor(rtol, name="rtol", dtype=real)
        atol = convert_to_tensor(atol, name="atol", dtype=real)
        tol = atol + rtol * unary_math_ops.abs(y)
        condition = reduction_ops.reduce_all(comparison_ops.less(unary_math_ops.abs(x - y), tol))
        return Assert(condition, data, summarize=summarize)


def _number(value, dtype):
    known = constant_value(value) if isinstance(value, Tensor) else value
    return value.name if known is None else str(dtype.as_numpy_dtype(known))


# ---- ranks, dtypes, shapes ------------------------------------------------------------------------------------------
class _StaticRankFailed(Exception):
    pass


def _rank_condition(x, ranks, static_condition, dynamic_condition, data, summarize):
    for rank in ranks:
        assert_type(rank, dtypes.int32)
    statics = [constant_value(r) for r in ranks]
    if all(s is not None for s in statics):
        if any(np.ndim(s) != 0 for s in statics):
            raise ValueError("Rank must be a scalar.")
        if x.shape.ndims is not None:
            if not static_condition(x.shape.ndims, [int(s) for s in statics]):
                raise _StaticRankFailed(x.shape.ndims, [int(s) for s in statics])
            return no_op(name="static_checks_determined_all_ok")
    condition = dynamic_condition(shape_ops.rank(x), ranks)
    for rank, static in zip(ranks, statics):
        if static is None:  # assert_rank(x, [n]) instead of assert_rank(x, n) fails here, not silently
            rank_check = assert_rank(rank, 0, data=["Rank must be a scalar. Received rank: ", rank])
            condition = with_dependencies([rank_check], condition)
    return Assert(condition, data, summarize=summarize)


def _rank_assert(what, opname, static_condition, dynamic_condition, x, ranks, data, summarize, message, name):
    with graph_mod.name_scope(name, opname, [x]):
        x = convert_to_tensor(x, name="x")
        ranks = [convert_to_tensor(r, name="rank") for r in ranks]
        message = _message_prefix(message)
        if data is None:
            data = [message, f"Tensor {x.name} must have {what}"] + ranks + ["Received shape: ", shape_ops.shape(x)]
        try:
            return _rank_condition(x, ranks, static_condition, dynamic_condition, data, summarize)
        except _StaticRankFailed as e:
            actual, given = e.args
            given = f"({', '.join(map(str, given))})" if opname == "assert_rank_in" else given[0]
            raise ValueError(f"{message}Tensor {x.name} must have {what} {given}.  Received rank {actual}, "
                             f"shape {x.shape}") from None


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """Checks x's rank: raises ValueError now if the static rank differs, else an op that checks when run."""
    return _rank_assert("rank", "assert_rank", lambda actual, given: actual == given[0],
                        lambda actual, given: comparison_ops.equal(actual, given[0]),
                        x, [rank], data, summarize, message, name)


def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """Checks x's rank is at least ``rank``, statically where it is known."""
    return _rank_assert("rank at least", "assert_rank_at_least", lambda actual, given: actual >= given[0],
                        lambda actual, given: comparison_ops.greater_equal(actual, given[0]),
                        x, [rank], data, summarize, message, name)


def _any_equal(actual, given):
    if not given:
        return convert_to_tensor(False)
    result = comparison_ops.equal(given[0], actual)
    for g in given[1:]:
        result = comparison_ops.logical_or(result, comparison_ops.equal(g, actual))
    return result


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Checks x's rank is one of ``ranks``, statically where it is known."""
    return _rank_assert("rank in", "assert_rank_in", lambda actual, given: actual in given, _any_equal,
                        x, list(ranks), data, summarize, message, name)


def assert_type(tensor, tf_type, message=None, name=None):
    """Raises TypeError now unless ``tensor`` has dtype ``tf_type``; returns a NoOp."""
    tf_type = dtypes.as_dtype(tf_type)
    with graph_mod.name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype is not tf_type:
            raise TypeError(f"{_message_prefix(message)}{tensor.name} must be of type {tf_type!r}; "
                            f"got {tensor.dtype!r}")
        return no_op(name="statically_determined_correct_type")


def assert_integer(x, message=None, name=None):
    """Raises TypeError now unless x has an integer dtype; returns a NoOp."""
    with graph_mod.name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(f'{_message_prefix(message)}Expected "x" to be integer type.  Found: {x.name} of dtype '
                            f"{_dtype_text(x.dtype)}")
        return no_op(name="statically_determined_was_integer")


def assert_scalar(tensor, name=None, message=None):
    """``tensor`` itself; raises ValueError now unless its static shape is a scalar's."""
    with graph_mod.name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor)
        if tensor.shape.ndims != 0:
            raise ValueError(f"{_message_prefix(message)}Expected scalar shape for {tensor.name}, "
                             f"saw shape: {tensor.shape}.")
        return tensor


def assert_proper_iterable(values):
    """Raises TypeError unless ``values`` is an iterable of items (not a tensor, array or string)."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def assert_same_float_dtype(tensors=None, dtype=None):
    """The one floating dtype of ``tensors`` (and ``dtype``), float32 if none; ValueError if they differ."""
    first = None
    for t in tensors or ():
        if t is None:
            continue
        found = t.dtype.base_dtype
        if dtype is None:
            dtype, first = found, t
        elif found is not dtype:
            as_first = f" as {first.name}" if first is not None else ""
            raise ValueError(f"{t.name}, type={_dtype_text(found)}, must be of the same type "
                             f"({_dtype_text(dtype)}){as_first}.")
    if dtype is None:
        return dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {_dtype_text(dtype)}.")
    return dtype


# ---- predicates -------------------------------------------------------------------------------------------------
def is_numeric_tensor(tensor):
    """Whether ``tensor`` is a Tensor of a numeric (not bool or string) dtype."""
    return isinstance(tensor, Tensor) and tensor.dtype.is_numeric


def _steps(x):
    x = shape_ops.reshape(x, [-1])
    if not is_numeric_tensor(x):
        raise TypeError(f"Expected x to be numeric, instead found: {x}")
    return x[1:] - x[:-1]  # empty for fewer than two elements: then any order holds


def is_non_decreasing(x, name=None):
    """A bool scalar: whether x, flattened, never decreases."""
    with graph_mod.name_scope(name, "is_non_decreasing", [x]):
        steps = _steps(convert_to_tensor(x, name="x"))
        return reduction_ops.reduce_all(comparison_ops.less_equal(convert_to_tensor(0, dtype=steps.dtype), steps))


def is_strictly_increasing(x, name=None):
    """A bool scalar: whether x, flattened, always increases."""
    with graph_mod.name_scope(name, "is_strictly_increasing", [x]):
        steps = _steps(convert_to_tensor(x, name="x"))
        return reduction_ops.reduce_all(comparison_ops.less(convert_to_tensor(0, dtype=steps.dtype), steps))
