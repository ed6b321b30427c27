"""Math ops while building graphs (no kernels needed): static shapes, dtypes, argument handling and errors."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.broadcast_gradient_ops import broadcast_reduction_axes
from tensorweave.ops.range_ops import range_size


def ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


@pytest.mark.parametrize("a, b, expected", [
    ([2, 3], [2, 3], [2, 3]), ([2, 1, 4], [3, 1], [2, 3, 4]), ([], [5], [5]), ([None, 3], [3], [None, 3]),
    ([None, 1], [1, 7], [None, 7]), ([4, None], [None, 1], [4, None]), ([0, 3], [1, 3], [0, 3]),
])
def test_binary_ops_broadcast_static_shapes(a, b, expected):
    for fn in (tf.add, tf.subtract, tf.multiply, tf.maximum, tf.squared_difference, tf.less, tf.equal):
        assert fn(ph(a), ph(b)).shape.as_list() == expected


def test_unknown_rank_broadcasts_to_unknown_rank():
    assert tf.add(ph(None), ph([3])).shape.ndims is None


def test_incompatible_broadcast_names_the_op_the_shapes_and_the_line():
    with pytest.raises(ValueError) as info:
        tf.multiply(ph([2, 3]), ph([4]), name="scale")
    message = str(info.value)
    assert "'scale'" in message and "(Mul)" in message and "(2, 3)" in message and "test_math_shapes.py" in message


def test_mismatched_dtypes_are_a_type_error_that_suggests_a_cast():
    with pytest.raises(TypeError, match="float64.*float32.*tf.cast|tf.cast"):
        tf.add(ph([2]), ph([2], tf.float64))


def test_python_values_take_the_tensor_dtype():
    x = ph([2], tf.float64)
    assert tf.add(x, 1).dtype == tf.float64 and tf.subtract(2.0, x).dtype == tf.float64
    assert tf.multiply(ph([2], tf.int64), 3).dtype == tf.int64


@pytest.mark.parametrize("fn", [tf.exp, tf.log, tf.sqrt, tf.sigmoid, tf.floor])
def test_floating_only_ops_refuse_integers_and_list_the_allowed_types(fn):
    with pytest.raises(TypeError, match="int32.*allowed"):
        fn(ph([2], tf.int32))


def test_comparisons_and_predicates_return_bool():
    x = ph([None, 3])
    for t in (tf.less(x, 0.0), tf.greater_equal(x, x), tf.is_nan(x), tf.is_finite(x), tf.logical_not(x > 0)):
        assert t.dtype == tf.bool
    assert tf.equal(ph([2], tf.string), "a").dtype == tf.bool
    with pytest.raises(TypeError):
        tf.less(ph([2], tf.string), "a")


def test_logical_ops_need_bools():
    with pytest.raises(TypeError, match="bool"):
        tf.logical_and(ph([2]), ph([2]))
    assert tf.logical_xor(ph([2], tf.bool), True).op.type == "NotEqual"


def test_cast_dtypes_and_aliases():
    x = ph([2, None], tf.int32)
    assert tf.cast(x, tf.int32) is x
    assert tf.cast(x, tf.float16).dtype == tf.float16 and tf.cast(x, "float64").shape.as_list() == [2, None]
    assert (tf.to_float(x).dtype, tf.to_double(x).dtype, tf.to_int64(x).dtype, tf.to_int32(tf.to_float(x)).dtype) == \
        (tf.float32, tf.float64, tf.int64, tf.int32)
    assert tf.to_float(x).op.name.startswith("ToFloat")
    with pytest.raises(TypeError):
        tf.cast(ph([2], tf.string), tf.float32)


def test_division_flavours_choose_their_ops_and_dtypes():
    ints, floats = ph([3], tf.int32), ph([3])
    assert tf.truediv(ints, ints).dtype == tf.float64 and tf.truediv(ints, ints).op.type == "RealDiv"
    assert tf.truediv(ph([3], tf.int16), 2).dtype == tf.float32
    assert tf.divide(floats, 2.0).dtype == tf.float32
    assert tf.div(ints, 2).op.type == "FloorDiv" and tf.div(floats, 2.0).op.type == "RealDiv"
    assert tf.floordiv(ints, 2).dtype == tf.int32 and tf.mod(floats, 2.0).op.type == "FloorMod"
    assert (tf.sub, tf.mul, tf.neg, tf.floor_div, tf.floormod) == (tf.subtract, tf.multiply, tf.negative,
                                                                   tf.floordiv, tf.mod)
    with pytest.raises(TypeError, match="same dtype"):
        tf.truediv(ints, ph([3], tf.int64))


@pytest.mark.parametrize("axis, keepdims, expected", [
    (None, False, []), (None, True, [1, 1, 1]), (1, False, [2, 4]), (-1, True, [2, 3, 1]), ([0, 2], False, [3]),
    ([0, -3], False, [3, 4]), ([], False, [2, 3, 4]),
])
def test_reduction_shapes(axis, keepdims, expected):
    x = ph([2, 3, 4])
    for fn in (tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_min, tf.reduce_prod, tf.reduce_logsumexp):
        assert fn(x, axis, keepdims=keepdims).shape.as_list() == expected, fn.__name__
    assert tf.reduce_any(ph([2, 3, 4], tf.bool), axis, keepdims=keepdims).shape.as_list() == expected
    assert tf.count_nonzero(x, axis, keepdims=keepdims).shape.as_list() == expected


def test_reduction_axes_known_only_at_run_time():
    x = ph([2, 3, 4])
    axis = tf.placeholder(tf.int32, [None])
    assert tf.reduce_sum(x, axis).shape.ndims is None
    assert tf.reduce_sum(x, axis, keepdims=True).shape.as_list() == [None, None, None]
    assert tf.reduce_sum(ph(None)).shape.ndims is None  # axes come from tf.range(tf.rank(x))


def test_tf1_reduction_argument_spellings():
    x = ph([2, 3])
    assert tf.reduce_sum(x, reduction_indices=[1], keep_dims=True).shape.as_list() == [2, 1]
    assert tf.reduce_mean(x, reduction_indices=0).shape.as_list() == [3]
    with pytest.raises(ValueError, match="both 'axis' and 'reduction_indices'"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="both 'keepdims' and 'keep_dims'"):
        tf.reduce_sum(x, keepdims=True, keep_dims=True)


def test_reduction_axis_out_of_range_is_caught_while_building():
    with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2 dimensions"):
        tf.reduce_sum(ph([2, 3]), 2)
    with pytest.raises(ValueError, match="Invalid reduction dimension"):
        tf.reduce_max(ph([]), 0)


def test_reductions_keep_their_dtypes():
    assert tf.reduce_sum(ph([2], tf.int32)).dtype == tf.int32 and tf.reduce_mean(ph([2], tf.int64)).dtype == tf.int64
    assert tf.reduce_all(ph([2], tf.bool)).dtype == tf.bool and tf.count_nonzero(ph([2])).dtype == tf.int64
    assert tf.count_nonzero(ph([2]), dtype=tf.int32).dtype == tf.int32
    with pytest.raises(TypeError):
        tf.reduce_all(ph([2]))


def test_argmax_shapes_spellings_and_output_type():
    x = ph([2, 3, 4])
    assert tf.argmax(x, 1).shape.as_list() == [2, 4] and tf.argmax(x, 1).dtype == tf.int64
    assert tf.argmin(x, dimension=-1, output_type=tf.int32).shape.as_list() == [2, 3]
    assert tf.argmin(x, dimension=-1, output_type=tf.int32).dtype == tf.int32
    assert tf.argmax(x).shape.as_list() == [3, 4]
    assert tf.argmax(x, tf.placeholder(tf.int32, [])).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="both 'axis' and 'dimension'"):
        tf.argmax(x, axis=0, dimension=0)
    with pytest.raises(ValueError, match="out of range"):
        tf.argmax(x, 3)


def test_matmul_shapes_transposes_and_errors():
    assert tf.matmul(ph([2, 3]), ph([3, 5])).shape.as_list() == [2, 5]
    assert tf.matmul(ph([3, 2]), ph([5, 3]), transpose_a=True, transpose_b=True).shape.as_list() == [2, 5]
    assert tf.matmul(ph([None, 3]), ph([3, None])).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="inner dimensions 3 and 4"):
        tf.matmul(ph([2, 3]), ph([4, 5]))
    with pytest.raises(ValueError):
        tf.matmul(ph([3]), ph([3, 2]))
    with pytest.raises(ValueError, match="only one of transpose_a and adjoint_a"):
        tf.matmul(ph([2, 2]), ph([2, 2]), transpose_a=True, adjoint_a=True)


def test_batch_matmul_broadcasts_batch_dimensions():
    product = tf.matmul(ph([7, 1, 2, 3]), ph([5, 3, 4]))
    assert product.op.type == "BatchMatMulV2" and product.shape.as_list() == [7, 5, 2, 4]
    assert tf.matmul(ph([4, 3, 2]), ph([2, 3]), adjoint_a=True, transpose_b=True).shape.as_list() == [4, 2, 2]
    assert tf.matmul(ph(None), ph([3, 4])).op.type == "BatchMatMulV2"
    with pytest.raises(ValueError, match="incompatible for broadcasting"):
        tf.matmul(ph([2, 2, 3]), ph([4, 3, 1]))
    with pytest.raises(ValueError, match="same batch dimensions"):
        tf.extension.apply_op("BatchMatMul", [ph([2, 2, 3]), ph([1, 3, 1])])


def test_add_n_shapes_and_errors():
    assert tf.add_n([ph([None, 3]), ph([2, None])]).shape.as_list() == [2, 3]
    x = ph([2])
    assert tf.add_n([x]) is x and tf.add_n([x], name="total").op.type == "Identity"
    with pytest.raises(ValueError, match="one shape"):
        tf.add_n([ph([2]), ph([3])])
    with pytest.raises(ValueError, match="non-empty list"):
        tf.add_n([])
    assert tf.accumulate_n([x, x, x]).op.type == "AddN"


def test_select_and_where_shapes():
    values = ph([4, 3])
    assert tf.where(ph([4], tf.bool), values, values).shape.as_list() == [4, 3]
    assert tf.where(ph([], tf.bool), values, values).shape.as_list() == [4, 3]
    assert tf.where_v2(ph([4, 1], tf.bool), ph([3]), 0.0).shape.as_list() == [4, 3]
    with pytest.raises(ValueError, match="one entry per row"):
        tf.where(ph([3], tf.bool), values, values)
    with pytest.raises(ValueError, match="one shape"):
        tf.where(ph([4], tf.bool), values, ph([3]))
    with pytest.raises(ValueError, match="both be given"):
        tf.where(ph([2], tf.bool), values)


def test_clip_by_value_shapes():
    x = ph([None, 3])
    assert tf.clip_by_value(x, 0.0, 1.0).shape.as_list() == [None, 3]
    assert tf.clip_by_value(x, ph([3]), 1.0).op.type == "ClipByValue"
    with pytest.raises(ValueError, match="does not broadcast"):
        tf.clip_by_value(ph([3]), ph([2, 3]), 1.0)


def test_range_static_sizes_and_dtype_inference():
    assert tf.range(5).shape.as_list() == [5] and tf.range(5).dtype == tf.int32
    assert tf.range(2, 11, 3).shape.as_list() == [3]
    assert tf.range(10, 0, -3).shape.as_list() == [4]
    assert tf.range(0.0, 1.0, 0.3).shape.as_list() == [4] and tf.range(0.0, 1.0, 0.3).dtype == tf.float32
    assert tf.range(3, dtype=tf.int64).dtype == tf.int64
    assert tf.range(tf.constant(1, tf.int64), 4.0).dtype == tf.float32
    assert tf.range(tf.placeholder(tf.int32, [])).shape.as_list() == [None]
    with pytest.raises(ValueError, match="delta != 0"):
        tf.range(0, 4, 0)
    with pytest.raises(ValueError, match="start <= limit"):
        tf.range(4, 0)


def test_range_size_matches_numpy():
    for args in [(0, 10, 3), (5, -5, -2), (0.5, 3.2, 0.7), (-1.0, -4.0, -1.5), (3, 3, 1)]:
        assert range_size(*args) == len(np.arange(*args)), args


def test_range_and_cast_fold_into_static_values():
    from tensorweave.framework.tensor_util import constant_value
    np.testing.assert_array_equal(constant_value(tf.range(1, 7, 2)), [1, 3, 5])
    assert constant_value(tf.cast(tf.range(3), tf.float32)).dtype == np.float32


def test_cumulative_and_segment_shapes():
    assert tf.cumsum(ph([2, None]), 1, exclusive=True).shape.as_list() == [2, None]
    with pytest.raises(ValueError, match="out of range"):
        tf.cumprod(ph([2, 3]), 2)
    assert tf.unsorted_segment_sum(ph([5, 4]), ph([5], tf.int32), 3).shape.as_list() == [3, 4]
    assert tf.unsorted_segment_sum(ph([2, 5, 4]), ph([2, 5], tf.int64), 7).shape.as_list() == [7, 4]
    assert tf.unsorted_segment_sum(ph([5, 4]), ph([5], tf.int32), tf.placeholder(tf.int32, [])).shape.as_list() \
        == [None, 4]
    assert tf.segment_sum(ph([5, 4]), ph([5], tf.int32)).shape.as_list() == [None, 4]
    with pytest.raises(ValueError, match="prefix"):
        tf.unsorted_segment_sum(ph([5, 4]), ph([4], tf.int32), 3)


@pytest.mark.parametrize("s0, s1, r0, r1", [
    ([2, 3], [2, 3], [], []), ([2, 3], [3], [], [0]), ([2, 1, 4], [3, 1], [1], [0, 2]), ([], [4, 5], [0, 1], []),
    ([1, 1], [1, 1], [], []), ([5, 1], [1, 0], [1], [0]),
])
def test_broadcast_reduction_axes(s0, s1, r0, r1):
    assert broadcast_reduction_axes(s0, s1) == (r0, r1)


def test_broadcast_reduction_axes_refuse_incompatible_shapes():
    with pytest.raises(ValueError, match=r"Incompatible shapes: \[2, 3\] vs. \[4\]"):
        broadcast_reduction_axes([2, 3], [4])


def test_broadcast_gradients_are_summed_in_python_when_shapes_are_known():
    x, b = ph([None, 3]), ph([3])
    grad_b = tf.gradients(x + b, b, grad_ys=ph([None, 3]))[0]
    assert grad_b.op.type == "Sum" and grad_b.shape.as_list() == [3]
    assert tf.extension.constant_value(grad_b.op.inputs[1]).tolist() == [0]
    column = ph([4, 1])
    grad_x, grad_col = tf.gradients(ph([4, 3]) * column, [x, column], grad_ys=ph([4, 3]))
    assert grad_x is None and grad_col.shape.as_list() == [4, 1]


def test_python_operators_build_tf1_ops():
    x, n = ph([2]), ph([2], tf.int32)
    types = {"+": (x + 1).op.type, "r-": (1.0 - x).op.type, "*": (x * x).op.type, "/": (x / 2).op.type,
             "int/": (n / n).op.type, "//": (n // 2).op.type, "%": (n % 2).op.type, "**": (x ** 2).op.type,
             "neg": (-x).op.type, "abs": abs(x).op.type, "<": (x < 1).op.type, ">=": (x >= 1).op.type,
             "&": ((x > 0) & (x < 1)).op.type, "~": (~(x > 0)).op.type, "@": (ph([2, 2]) @ ph([2, 2])).op.type}
    assert types == {"+": "Add", "r-": "Sub", "*": "Mul", "/": "RealDiv", "int/": "RealDiv", "//": "FloorDiv",
                     "%": "FloorMod", "**": "Pow", "neg": "Neg", "abs": "Abs", "<": "Less", ">=": "GreaterEqual",
                     "&": "LogicalAnd", "~": "LogicalNot", "@": "MatMul"}
    assert (n / n).dtype == tf.float64
    assert (x == x) is True and (x != ph([2])) is True and {x: 1}[x] == 1


def test_every_math_op_has_a_gradient_or_is_marked_not_differentiable():
    from tensorweave.ops import (broadcast_gradient_ops, comparison_ops, cumulative_ops, math_ops, matmul_ops,
                                 range_ops, reduction_ops, segment_ops, unary_math_ops)
    modules = (math_ops, broadcast_gradient_ops, unary_math_ops, comparison_ops, reduction_ops, cumulative_ops,
               matmul_ops, segment_ops, range_ops)
    missing = [op_def.name for module in modules for op_def in module.DEFS if op_def.grad is None]
    assert missing == []


def test_math_namespace_has_the_tf_1_13_names():
    for name in ("add", "reduce_sum", "reduce_logsumexp", "log", "sigmoid", "divide_no_nan", "floormod", "argmax",
                 "unsorted_segment_sum", "segment_sum", "cumsum", "count_nonzero", "is_finite", "squared_difference",
                 "logical_xor", "truediv", "reciprocal"):
        assert callable(getattr(tf.math, name)), name
    assert tf.math.divide_no_nan is tf.div_no_nan
