"""concat/split/stack/unstack, transpose/reverse and pad/tile while building (no kernels needed): static
shapes, dtypes, argument handling, constant folding and build-time errors."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape


def ph(shape, dtype=tf.float32, name=None):
    return tf.placeholder(dtype, shape, name=name)


def shape_of(t):
    return t.shape.as_list() if t.shape.ndims is not None else None


# ---- concat ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes, axis, expected", [
    ([[2, 3], [4, 3]], 0, [6, 3]), ([[2, 3], [2, 5]], -1, [2, 8]), ([[None, 3], [4, 3]], 0, [None, 3]),
    ([[2, None], [None, 3]], 1, [2, None]), ([[None, None], [2, 3]], 0, [None, 3]), ([None, [2, 3]], 0, [None, 3]),
    ([None, None], 0, None), ([[2, 3, 4]] * 3, 1, [2, 9, 4]), ([[0, 3], [1, 3]], -2, [1, 3]),
])
def test_concat_shape(shapes, axis, expected):
    assert shape_of(tf.concat([ph(s) for s in shapes], axis)) == expected


def test_concat_with_a_run_time_axis_keeps_the_rank():
    axis = ph([], tf.int32)
    assert shape_of(tf.concat([ph([2, 3]), ph([2, 3])], axis)) == [None, None]
    assert shape_of(tf.concat([ph([2, 3]), ph([2, 3])], tf.constant(1, tf.int64))) == [2, 6]


def test_concat_op_types_dtypes_and_old_argument_order():
    out = tf.concat(1, [ph([2, 3], tf.int64), ph([2, 1], tf.int64)])
    assert out.op.type == "ConcatV2" and out.dtype == tf.int64 and shape_of(out) == [2, 4]
    assert tf.concat([ph([2])], 0).op.type == "Identity"
    strings = tf.concat([tf.constant(["a"]), ["b", "c"]], 0)
    assert strings.dtype == tf.string and shape_of(strings) == [3]


@pytest.mark.parametrize("shapes, axis, match", [
    ([[2, 3], [2, 4]], 0, r"dimension 1 differs: input 0 \(a:0, shape \(2, 3\)\) and input 1 \(b:0, shape \(2, 4\)\)"),
    ([[2, 3], [2]], 0, "one rank"), ([[2, 3], [2, 3]], 2, r"out of range .* \(expected \[-2, 2\)\)"),
    ([[], []], 0, "scalars"),
])
def test_concat_errors(shapes, axis, match):
    with pytest.raises(ValueError, match=match):
        tf.concat([ph(s, name=n) for s, n in zip(shapes, "ab")], axis)


def test_concat_axis_must_be_a_scalar():
    with pytest.raises(ValueError, match="scalar"):
        tf.concat([ph([2]), ph([2])], [0])
    with pytest.raises(ValueError, match="scalar"):
        tf.concat([ph([2])], [0])


def test_concat_and_stack_fold_constants_and_partial_shapes():
    assert constant_value(tf.concat([[1, 2], tf.constant([3])], 0)).tolist() == [1, 2, 3]
    assert constant_value(tf.stack([tf.constant(4), 5], name="s")).tolist() == [4, 5]
    n = ph([], tf.int32)
    assert constant_value_as_shape(tf.stack([n, 3])).as_list() == [None, 3]
    assert constant_value_as_shape(tf.concat([tf.stack([n]), [2, 7]], 0)).as_list() == [None, 2, 7]


# ---- split ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, splits, axis, expected", [
    ([6, 4], 3, 0, [[2, 4]] * 3), ([6, 4], 2, -1, [[6, 2]] * 2), ([None, 4], 2, 0, [[None, 4]] * 2),
    ([6, 4], [1, 5], 0, [[1, 4], [5, 4]]), ([6, 4], [1, -1, 2], 0, [[1, 4], [3, 4], [2, 4]]),
    ([None, 4], [1, -1], 0, [[1, 4], [None, 4]]), ([5], [0, 5], 0, [[0], [5]]),
])
def test_split_shapes(shape, splits, axis, expected):
    parts = tf.split(ph(shape), splits, axis=axis)
    assert isinstance(parts, list) and [shape_of(p) for p in parts] == expected
    assert parts[0].op.type == ("Split" if isinstance(splits, int) else "SplitV")


def test_split_with_run_time_sizes_or_axis():
    n = ph([], tf.int32)
    parts = tf.split(ph([6, 4]), tf.stack([n, 2]), axis=0)
    assert [shape_of(p) for p in parts] == [[None, 4], [2, 4]]
    assert [shape_of(p) for p in tf.split(ph([6, 4]), 2, axis=n)] == [[None, None]] * 2
    assert len(tf.split(ph([6]), ph([3], tf.int64))) == 3
    assert len(tf.split(ph([6]), ph([None], tf.int32), num=4)) == 4


@pytest.mark.parametrize("splits, axis, match", [
    (4, 0, "size 6 into 4 equal parts"), ([1, 2], 0, "add up to the size 6"), ([-1, -1], 0, "at most one -1"),
    ([7, -1], 0, "add up"), (2, 2, "out of range"), (0, 0, "at least 1"),
])
def test_split_errors(splits, axis, match):
    with pytest.raises(ValueError, match=match):
        tf.split(ph([6, 4]), splits, axis=axis)


def test_split_needs_num_when_sizes_have_unknown_length():
    with pytest.raises(ValueError, match="pass num="):
        tf.split(ph([6]), ph([None], tf.int32))


# ---- stack / unstack ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes, axis, expected", [
    ([[2, 3]] * 4, 0, [4, 2, 3]), ([[2, 3]] * 4, -1, [2, 3, 4]), ([[2, 3]] * 2, 1, [2, 2, 3]),
    ([[None, 3], [2, None]], 0, [2, 2, 3]), ([None, [2]], 1, [2, 2]), ([[]] * 3, 0, [3]),
])
def test_stack_shape(shapes, axis, expected):
    out = tf.stack([ph(s) for s in shapes], axis=axis)
    assert out.op.type == "Pack" and shape_of(out) == expected


def test_stack_of_python_values_is_a_constant_and_mixed_lists_are_packed():
    assert tf.stack([[1, 2], [3, 4]], axis=1).op.type == "Const"
    mixed = tf.stack([ph([], tf.int64), 3])
    assert mixed.op.type == "Pack" and mixed.dtype == tf.int64 and shape_of(mixed) == [2]
    nested = tf.stack([[ph([]), 1.0], [2.0, 3.0]])
    assert shape_of(nested) == [2, 2]
    assert shape_of(tf.pack([ph([3])] * 2)) == [2, 3] and shape_of(tf.parallel_stack([ph([3])] * 2)) == [2, 3]


@pytest.mark.parametrize("shape, axis, num, expected", [
    ([4, 2, 3], 0, None, [2, 3]), ([4, 2, 3], -1, None, [4, 2]), ([None, 5], 1, None, [None]),
    ([None, 5], 0, 3, [5]), (None, 0, 2, None),
])
def test_unstack_shapes(shape, axis, num, expected):
    parts = tf.unstack(ph(shape), num=num, axis=axis)
    assert len(parts) == (num or (shape[axis])) and all(shape_of(p) == expected for p in parts)


def test_unstack_and_stack_errors():
    with pytest.raises(ValueError, match="dimension 0 is unknown.*pass num="):
        tf.unstack(ph([None, 2]))
    with pytest.raises(ValueError, match="size 4 into 3"):
        tf.unstack(ph([4]), num=3)
    with pytest.raises(ValueError, match="scalar"):
        tf.unpack(ph([]))
    with pytest.raises(ValueError, match=r"one shape, but input 0 \(a:0, shape \(2,\)\) and input 1 \(b:0"):
        tf.stack([ph([2], name="a"), ph([3], name="b")])
    with pytest.raises(ValueError, match="out of range"):
        tf.stack([ph([2]), ph([2])], axis=-3)
    with pytest.raises(ValueError, match="fully known"):
        tf.parallel_stack([ph([None])])


# ---- transpose / reverse ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, perm, expected", [
    ([2, 3, 4], None, [4, 3, 2]), ([2, 3, 4], [1, 2, 0], [3, 4, 2]), ([None, 3], [1, 0], [3, None]),
    (None, [1, 0, 2], [None] * 3), ([], [], []),
])
def test_transpose_shapes(shape, perm, expected):
    out = tf.transpose(ph(shape), perm)
    assert out.op.type == "Transpose" and shape_of(out) == expected


def test_transpose_with_run_time_perm_and_matrix_transpose():
    assert shape_of(tf.transpose(ph([2, 3, 4]), ph([3], tf.int32))) == [None] * 3
    assert shape_of(tf.transpose(ph(None), ph([2], tf.int32))) == [None] * 2
    assert shape_of(tf.matrix_transpose(ph([5, 2, 3]))) == [5, 3, 2]
    assert shape_of(tf.invert_permutation(ph([None], tf.int64))) == [None]
    assert constant_value(tf.invert_permutation([2, 0, 1])).tolist() == [1, 2, 0]


@pytest.mark.parametrize("perm, match", [
    ([0, 0, 1], "not a permutation"), ([0, 1], "2 entries, but the input has rank 3"), ([0, 1, 3], "permutation"),
])
def test_transpose_errors(perm, match):
    with pytest.raises(ValueError, match=match):
        tf.transpose(ph([2, 3, 4]), perm)


def test_reverse_shapes_and_errors():
    assert shape_of(tf.reverse(ph([None, 3]), [-1])) == [None, 3]
    assert shape_of(tf.reverse_v2(ph([2, 3]), ph([None], tf.int32))) == [2, 3]
    with pytest.raises(ValueError, match="out of range"):
        tf.reverse(ph([2, 3]), [2])
    with pytest.raises(ValueError, match="more than once"):
        tf.reverse(ph([2, 3]), [1, -1])
    with pytest.raises(ValueError, match="matrices"):
        tf.matrix_transpose(ph([2]))


def test_reverse_sequence_shapes_and_errors():
    out = tf.reverse_sequence(ph([4, None, 3]), ph([4], tf.int64), seq_axis=1)
    assert shape_of(out) == [4, None, 3] and out.op.get_attr("batch_dim") == 0
    assert tf.reverse_sequence(ph([2, 3]), [1, 2, 0], seq_dim=0, batch_dim=1).op.get_attr("seq_dim") == 0
    with pytest.raises(ValueError, match="seq_lengths has 3 entries"):
        tf.reverse_sequence(ph([4, 5]), ph([3], tf.int64), seq_axis=1)
    with pytest.raises(ValueError, match="must differ"):
        tf.reverse_sequence(ph([4, 5]), ph([4], tf.int64), seq_axis=0, batch_axis=0)
    with pytest.raises(ValueError, match="out of range"):
        tf.reverse_sequence(ph([4, 5]), ph([4], tf.int64), seq_axis=2)
    with pytest.raises(TypeError, match="needs seq_axis"):
        tf.reverse_sequence(ph([4, 5]), ph([4], tf.int64))


# ---- pad / tile -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, paddings, mode, expected", [
    ([2, 3], [[1, 1], [0, 2]], "CONSTANT", [4, 5]), ([None, 3], [[1, 1], [2, 2]], "reflect", [None, 7]),
    ([2, 3], [[2, 2], [3, 3]], "Symmetric", [6, 9]), (None, [[1, 1]], "CONSTANT", [None]),
])
def test_pad_shapes(shape, paddings, mode, expected):
    assert shape_of(tf.pad(ph(shape), paddings, mode)) == expected


def test_pad_op_types_and_run_time_paddings():
    assert tf.pad(ph([2]), [[1, 1]]).op.type == "Pad"
    assert tf.pad(ph([2]), [[1, 1]], constant_values=1).op.type == "PadV2"
    assert tf.pad(ph([2]), [[1, 1]], constant_values=ph([])).op.type == "PadV2"
    mirror = tf.pad(ph([2]), [[1, 1]], "reflect")
    assert mirror.op.type == "MirrorPad" and mirror.op.get_attr("mode") == "REFLECT"
    assert shape_of(tf.pad(ph([2, 3]), ph([2, 2], tf.int32))) == [None, None]
    assert shape_of(tf.pad(ph(None), ph([3, 2], tf.int64))) == [None] * 3


@pytest.mark.parametrize("paddings, mode, match", [
    ([[1, 1]], "CONSTANT", r"shape \[rank, 2\]"), ([[1, 1, 1], [0, 0, 0]], "CONSTANT", r"shape \[rank, 2\]"),
    ([[0, -1], [0, 0]], "CONSTANT", "non-negative"), ([[2, 0], [0, 0]], "REFLECT", "at most 1"),
    ([[3, 0], [0, 0]], "SYMMETRIC", "at most 2"), ([[0, 0], [0, 0]], "EDGE", "'CONSTANT', 'REFLECT', 'SYMMETRIC'"),
])
def test_pad_errors(paddings, mode, match):
    with pytest.raises(ValueError, match=match):
        tf.pad(ph([2, 3]), paddings, mode)


@pytest.mark.parametrize("shape, multiples, expected", [
    ([2, 3], [2, 3], [4, 9]), ([None, 3], [2, 1], [None, 3]), ([2, 3], [0, 1], [0, 3]), (None, [2, 2], [None] * 2),
    ([], [], []),
])
def test_tile_shapes(shape, multiples, expected):
    out = tf.tile(ph(shape), multiples)
    assert out.op.type == "Tile" and shape_of(out) == expected


def test_tile_with_partly_known_multiples_and_errors():
    n = ph([], tf.int32)
    assert shape_of(tf.tile(ph([2, 3]), tf.stack([n, 2]))) == [None, 6]
    assert shape_of(tf.tile(ph([2, 3]), ph([2], tf.int64))) == [None, None]
    with pytest.raises(ValueError, match="multiples has 1 entries, but the input has rank 2"):
        tf.tile(ph([2, 3]), [2])
    with pytest.raises(ValueError, match="non-negative"):
        tf.tile(ph([2, 3]), [2, -1])
    with pytest.raises(ValueError, match="vector"):
        tf.tile(ph([2, 3]), [[2, 1]])


def test_gradient_graphs_build_with_the_expected_ops():
    x = ph([2, 3])
    assert [g.op.type for g in tf.gradients(tf.concat([x, x], 1), [x])] == ["AddN"]
    grad_ops = {op.type for op in tf.get_default_graph().get_operations()}
    assert "SplitV" in grad_ops
    assert tf.gradients(tf.transpose(x, [1, 0]), x)[0].op.type == "Transpose"
    assert tf.gradients(tf.stack([x]), x)[0].op.type == "Unpack"
    assert tf.gradients(tf.pad(x, [[1, 1], [1, 1]], "SYMMETRIC"), x)[0].op.type == "MirrorPadGrad"
    assert shape_of(tf.gradients(tf.tile(x, [2, 2]), x)[0]) == [2, 3]
    assert np.array_equal(constant_value(tf.gradients(tf.pad(x, [[1, 1], [1, 1]]), x)[0].op.inputs[1]), [1, 1])
