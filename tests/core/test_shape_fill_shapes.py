"""Shape ops, fills and stop_gradient while building graphs (no kernels needed): static shapes, constant
folding, op choices, argument handling and errors."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.extension import apply_op
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops import array_ops


def ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


def dims(t):
    return t.shape.as_list() if t.shape.ndims is not None else None


# ---- shape, size, rank ----------------------------------------------------------------------------------------------
def test_shape_size_rank_of_known_shapes_are_constants_with_the_static_values():
    x = ph([2, 3, 4])
    shape, size, rank = tf.shape(x), tf.size(x), tf.rank(x)
    assert [t.op.type for t in (shape, size, rank)] == ["Const"] * 3
    assert constant_value(shape).tolist() == [2, 3, 4] and constant_value(shape).dtype == np.int32
    assert constant_value(size) == 24 and constant_value(rank) == 3
    assert tf.shape(x, out_type=tf.int64).dtype == tf.int64 and tf.size(x, out_type=tf.int64).dtype == tf.int64


def test_shape_of_partly_known_tensor_is_an_op_that_shape_inference_sees_through():
    x = ph([None, 3])
    shape = tf.shape(x, name="s")
    assert shape.op.type == "Shape" and shape.name == "s:0" and dims(shape) == [2] and shape.dtype == tf.int32
    assert constant_value(shape) is None and constant_value_as_shape(shape).as_list() == [None, 3]
    assert tf.size(x).op.type == "Size" and dims(tf.size(x)) == [] and constant_value(tf.size(x)) is None
    assert tf.rank(x).op.type == "Const" and constant_value(tf.rank(x)) == 2
    assert tf.rank(ph(None)).op.type == "Rank" and dims(tf.shape(ph(None))) == [None]


def test_shape_ops_fold_when_a_later_shape_becomes_known():
    x = ph([None, 3])
    shape = apply_op("Shape", [x])
    x.set_shape([5, 3])
    assert constant_value(shape).tolist() == [5, 3]
    size, rank = apply_op("Size", [x]), apply_op("Rank", [x])
    assert constant_value(size) == 15 and constant_value(rank) == 2


def test_shape_n_gives_one_vector_per_input_in_one_op():
    shapes = tf.shape_n([ph([2, 3]), ph([None]), ph(None)], out_type=tf.int64)
    assert len({s.op for s in shapes}) == 1 and shapes[0].op.type == "ShapeN"
    assert [dims(s) for s in shapes] == [[2], [1], [None]] and all(s.dtype == tf.int64 for s in shapes)
    assert constant_value(shapes[0]).tolist() == [2, 3] and constant_value(shapes[1]) is None


# ---- reshape --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape, target, expected", [
    ([2, 3, 4], [6, 4], [6, 4]), ([2, 3, 4], [-1], [24]), ([2, 3, 4], [4, -1], [4, 6]), ([6], [2, -1, 3], [2, 1, 3]),
    ([None, 3], [-1], [None]), ([None, 3], [3, -1], [3, None]), ([None, 3], [2, 6], [2, 6]), (None, [2, -1], [2, None]),
    ([0, 3], [-1, 3], [0, 3]), ([2, 3], [], None), ([1], [], []),
])
def test_reshape_infers_static_shapes(x_shape, target, expected):
    if expected is None:
        with pytest.raises(ValueError, match="6 elements"):
            tf.reshape(ph(x_shape), target)
        return
    assert dims(tf.reshape(ph(x_shape), target)) == expected


def test_reshape_to_partly_known_shape_tensors():
    x, n = ph([4, 6]), ph([], tf.int32)
    assert dims(tf.reshape(x, ph([3], tf.int32))) == [None, None, None]
    assert dims(tf.reshape(x, ph([None], tf.int32))) is None
    assert dims(tf.reshape(x, [n, 2, 3])) == [4, 2, 3]  # the one unknown size is decided by the input's size
    assert dims(tf.reshape(ph([None, 6]), [n, 2, 3])) == [None, 2, 3]
    assert dims(tf.reshape(x, tf.shape(ph([None, 8])))) == [3, 8]
    assert dims(tf.reshape(x, tf.TensorShape([8, 3]))) == [8, 3]
    assert tf.reshape(x, np.array([24], np.int64)).op.inputs[1].dtype == tf.int64


@pytest.mark.parametrize("x_shape, target, message", [
    ([2, 3], [4], r"6 elements \(shape \(2, 3\)\) to shape \[4\] \(4 elements\)"),
    ([2, 3], [4, -1], "not a multiple of 4"),
    ([2, 3], [-1, -1], "more than one -1"),
    ([2, 3], [-2, 3], "negative size -2"),
    ([None, 3], [4, 2], "multiple of 3"),
])
def test_reshape_size_mistakes_raise_while_building_naming_the_shapes_and_the_line(x_shape, target, message):
    with pytest.raises(ValueError, match=message) as info:
        tf.reshape(ph(x_shape), target, name="flatten")
    assert "'flatten'" in str(info.value) and "test_shape_fill_shapes.py" in str(info.value)
    assert "flatten" not in [op.name for op in tf.get_default_graph().get_operations()]


def test_reshape_shape_must_be_a_vector_of_integers():
    with pytest.raises(ValueError):
        tf.reshape(ph([4]), ph([2, 2], tf.int32))
    with pytest.raises(TypeError):
        tf.reshape(ph([4]), [2.5, 2])


def test_reshape_of_constants_folds():
    c = tf.constant(np.arange(6))
    assert constant_value(tf.reshape(c, [3, -1])).tolist() == [[0, 1], [2, 3], [4, 5]]
    assert constant_value(tf.reshape(ph([6]), [3, 2])) is None


# ---- expand_dims, squeeze -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape, axis, expected", [
    ([2, 3], 0, [1, 2, 3]), ([2, 3], 2, [2, 3, 1]), ([2, 3], -1, [2, 3, 1]), ([2, 3], -3, [1, 2, 3]),
    ([], 0, [1]), ([None, 3], 1, [None, 1, 3]), (None, 0, None),
])
def test_expand_dims_static_shapes(x_shape, axis, expected):
    assert dims(tf.expand_dims(ph(x_shape), axis)) == expected


def test_expand_dims_arguments_and_errors():
    x = ph([2, 3])
    assert dims(tf.expand_dims(x, dim=1)) == [2, 1, 3]
    assert dims(tf.expand_dims(x, ph([], tf.int32))) == [None, None, None]
    assert constant_value(tf.expand_dims(tf.constant([1, 2]), 1)).tolist() == [[1], [2]]
    with pytest.raises(ValueError, match="out of range .* rank 2: it must be in \\[-3, 2\\]"):
        tf.expand_dims(x, 3)
    with pytest.raises(ValueError, match="Must specify an axis"):
        tf.expand_dims(x)
    with pytest.raises(ValueError, match="both 'axis' and 'dim'"):
        tf.expand_dims(x, 0, dim=0)
    with pytest.raises(ValueError, match="single integer"):
        tf.expand_dims(x, [0, 1])


@pytest.mark.parametrize("x_shape, axis, expected", [
    ([1, 2, 1, 3], None, [2, 3]), ([1, 2, 1, 3], [0], [2, 1, 3]), ([1, 2, 1, 3], [-2, 0], [2, 3]),
    ([1, 2, 1, 3], 2, [1, 2, 3]), ([None, 1, 3], [1], [None, 3]), ([None, 3], [0], [3]),
    ([None, 1], None, None), (None, [0], None), ([1], None, []),
])
def test_squeeze_static_shapes(x_shape, axis, expected):
    assert dims(tf.squeeze(ph(x_shape), axis)) == expected


def test_squeeze_errors_and_old_argument_name():
    x = ph([1, 2, 1])
    assert dims(tf.squeeze(x, squeeze_dims=[2])) == [1, 2]
    assert constant_value(tf.squeeze(tf.constant([[1], [2]]))).tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"Can not squeeze dim\[1\], expected a dimension of 1, got 2"):
        tf.squeeze(x, [1])
    with pytest.raises(ValueError, match="out of range"):
        tf.squeeze(x, [3])
    with pytest.raises(ValueError, match="both 'axis' and 'squeeze_dims'"):
        tf.squeeze(x, [0], squeeze_dims=[0])


# ---- broadcast ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape, target, expected", [
    ([3], [2, 3], [2, 3]), ([1, 3], [4, 2, 3], [4, 2, 3]), ([], [2, 2], [2, 2]), ([None], [2, 3], [2, 3]),
])
def test_broadcast_to_static_shapes(x_shape, target, expected):
    assert dims(tf.broadcast_to(ph(x_shape), target)) == expected


def test_broadcast_to_partly_known_target_and_errors():
    n = ph([], tf.int32)
    assert dims(tf.broadcast_to(ph([3]), [n, n])) == [None, 3]
    assert dims(tf.broadcast_to(ph([3]), ph([None], tf.int32))) is None
    with pytest.raises(ValueError, match="dimension 1 is 3 in the input and 4 in the target"):
        tf.broadcast_to(ph([3]), [2, 4])
    with pytest.raises(ValueError, match="fewer dimensions"):
        tf.broadcast_to(ph([2, 3]), [3])


def test_broadcast_static_and_dynamic_shape():
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])).as_list() == [2, 3]
    with pytest.raises(ValueError, match="incompatible"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    shape = tf.broadcast_dynamic_shape(tf.constant([2, 1, 3]), tf.constant([4, 1]))
    assert dims(shape) == [3] and constant_value(shape).tolist() == [2, 4, 3]
    assert dims(tf.broadcast_dynamic_shape(ph([None], tf.int32), ph([2], tf.int32))) == [None]


def test_ensure_shape_merges_and_refuses_incompatible_shapes():
    assert dims(tf.ensure_shape(ph([None, 3]), [5, None])) == [5, 3]
    with pytest.raises(ValueError, match="not compatible with the expected shape"):
        tf.ensure_shape(ph([2, 3]), [2, 4])


# ---- fills ----------------------------------------------------------------------------------------------------------
def test_small_fills_are_constants_and_large_ones_fill_a_scalar():
    small, large = tf.zeros([2, 3], tf.int64, name="z"), tf.ones([100, 100])
    assert small.op.type == "Const" and small.name == "z:0" and small.dtype == tf.int64 and dims(small) == [2, 3]
    assert constant_value(small).tolist() == [[0] * 3] * 2
    assert large.op.type == "Fill" and dims(large) == [100, 100] and large.name == "ones:0"
    assert large.op.inputs[1].op.type == "Const" and large.op.inputs[1].shape.ndims == 0
    assert constant_value(large).shape == (100, 100) and constant_value(tf.zeros([1000, 1000])) is None


def test_fill_dtypes_and_values():
    assert constant_value(tf.zeros([2], tf.bool)).tolist() == [False, False]
    assert constant_value(tf.ones([2], tf.bool)).tolist() == [True, True]
    assert constant_value(tf.zeros([2], tf.string)).tolist() == [b"", b""]
    assert tf.zeros([], tf.float16).dtype == tf.float16 and dims(tf.zeros([])) == []
    assert dims(tf.zeros(tf.TensorShape([2, 3]))) == [2, 3] and dims(tf.zeros(4)) == [4]
    with pytest.raises(TypeError, match="string"):
        tf.ones([2], tf.string)


def test_fills_with_run_time_shapes():
    x, n = ph([None, 3]), ph([], tf.int32)
    z = tf.zeros(tf.shape(x))
    assert z.op.type == "Fill" and dims(z) == [None, 3]
    mixed = tf.ones([n, 4], tf.int32)
    assert mixed.op.type == "Fill" and dims(mixed) == [None, 4] and mixed.op.inputs[0].op.type == "Pack"
    assert dims(tf.zeros(n)) == [None]
    f = tf.fill([2, n], 7.0)
    assert f.op.type == "Fill" and dims(f) == [2, None] and f.dtype == tf.float32
    assert constant_value(tf.fill([2, 2], 7)).tolist() == [[7, 7], [7, 7]]


def test_fill_errors():
    with pytest.raises(ValueError, match="must be a scalar"):
        tf.fill([2], [1.0, 2.0])
    with pytest.raises(ValueError, match="non-negative"):
        tf.fill([2, -1], 1.0)
    with pytest.raises(ValueError, match="fully defined"):
        tf.zeros(tf.TensorShape([None, 3]))


def test_zeros_like_and_ones_like_choose_constants_or_ops():
    known, partial = ph([2, 3], tf.int32), ph([None, 3])
    z = tf.zeros_like(known)
    assert z.op.type == "Const" and z.dtype == tf.int32 and constant_value(z).tolist() == [[0] * 3] * 2
    assert tf.zeros_like(known, optimize=False).op.type == "ZerosLike"
    zp, op = tf.zeros_like(partial), tf.ones_like(partial)
    assert (zp.op.type, op.op.type) == ("ZerosLike", "OnesLike") and dims(zp) == dims(op) == [None, 3]
    cast = tf.ones_like(partial, dtype=tf.int64)
    assert cast.dtype == tf.int64 and cast.op.type == "Fill" and dims(cast) == [None, 3]
    assert tf.ones_like(known, dtype=tf.float64).dtype == tf.float64
    s = tf.zeros_like(ph([None], tf.string))
    assert s.dtype == tf.string and s.op.type == "ZerosLike"
    assert constant_value(tf.ones_like(tf.constant([True, False]))).tolist() == [True, True]
    assert tf.zeros_like(partial, name="zz").name == "zz:0"


def test_zeros_like_op_folds_when_the_static_shape_is_known():
    z = apply_op("ZerosLike", [ph([2, 2])])
    o = apply_op("OnesLike", [ph([3], tf.int64)])
    assert constant_value(z).tolist() == [[0, 0], [0, 0]] and constant_value(o).tolist() == [1, 1, 1]
    assert constant_value(o).dtype == np.int64


# ---- stop_gradient and identities -------------------------------------------------------------------------------------
def test_stop_gradient_passes_shapes_and_constants_and_blocks_gradients():
    x = ph([None, 3])
    y = tf.stop_gradient(x)
    assert y.op.type == "StopGradient" and dims(y) == [None, 3]
    assert constant_value(tf.stop_gradient(tf.constant([1, 2]))).tolist() == [1, 2]
    assert tf.gradients(tf.reduce_sum(y), x) == [None]
    assert tf.gradients(tf.stop_gradient(x * 2.0) + x, x)[0] is not None


def test_prevent_gradient_refuses_differentiation_with_its_message():
    x = ph([3])
    y = array_ops.prevent_gradient(x, message="second derivative undefined")
    assert dims(y) == [3]
    with pytest.raises(LookupError, match="second derivative undefined"):
        tf.gradients(y * 2.0, x)


def test_identity_n_keeps_each_shape_and_dtype():
    a, b = ph([2, 3]), ph([None], tf.int32)
    outs = tf.identity_n([a, b])
    assert len(outs) == 2 and outs[0].op is outs[1].op and outs[0].op.type == "IdentityN"
    assert [dims(t) for t in outs] == [[2, 3], [None]] and [t.dtype for t in outs] == [tf.float32, tf.int32]


def test_gradient_graphs_reshape_back_statically_when_shapes_are_known():
    x = ph([None, 3])
    for y in (tf.reshape(x, [-1]), tf.expand_dims(x, 1), tf.squeeze(tf.expand_dims(x, 0), [0])):
        g = tf.gradients(y, x)[0]
        assert dims(g) == [None, 3]
        assert "Shape" not in {op.type for op in tf.get_default_graph().get_operations()}
    z = ph([None, None])
    g = tf.gradients(tf.reshape(z, [-1]), z)[0]
    assert dims(g) == [None, None] and g.op.type == "Reshape" and g.op.inputs[1].op.type == "Shape"
