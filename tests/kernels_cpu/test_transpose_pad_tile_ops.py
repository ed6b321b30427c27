"""transpose, reverse, reverse_sequence, invert_permutation, pad and tile on the CPU: values against numpy
over dtypes, run-time shapes and arguments, errors while building and running, and gradients."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_util import constant_value

from test_concat_split_ops import DTYPES, assert_same, gradient_error, run, sample


# ---- transpose ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_matches_numpy(dtype):
    a = sample((2, 3, 4), dtype)
    got = run([tf.transpose(a), tf.transpose(a, [1, 2, 0]), tf.transpose(a, np.array([0, 2, 1], np.int64)),
               tf.matrix_transpose(a)])
    for g, want in zip(got, [a.transpose(), a.transpose(1, 2, 0), a.transpose(0, 2, 1), a.transpose(0, 2, 1)]):
        assert_same(g, want)


def test_transpose_with_run_time_shapes_ranks_and_perms():
    x, unranked = tf.placeholder(tf.float32, [None, 3, None]), tf.placeholder(tf.float32)
    perm = tf.placeholder(tf.int32, [3])
    static = tf.transpose(x, [2, 0, 1])
    assert static.shape.as_list() == [None, None, 3]
    assert tf.transpose(x, perm).shape.as_list() == [None, None, None]
    a = sample((2, 3, 4), "float32")
    got = run([static, tf.transpose(x, perm), tf.transpose(unranked), tf.matrix_transpose(unranked)],
              {x: a, perm: [1, 0, 2], unranked: a})
    for g, want in zip(got, [a.transpose(2, 0, 1), a.transpose(1, 0, 2), a.transpose(), a.transpose(0, 2, 1)]):
        assert_same(g, want)


def test_conjugate_transpose():
    a = np.array([[1 + 2j, 3 - 1j]], np.complex128)
    assert_same(run(tf.transpose(a, conjugate=True)), a.conj().T)
    assert_same(run(tf.matrix_transpose(a, conjugate=True)), a.conj().T)


def test_transpose_errors():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    with pytest.raises(ValueError, match=r"not a permutation.*'transpose'.*test_transpose_pad_tile_ops.py"):
        tf.transpose(x, [1, 1])
    with pytest.raises(ValueError, match="3 entries, but the input has rank 2"):
        tf.transpose(x, [0, 1, 2])
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.matrix_transpose(tf.placeholder(tf.float32, [3]))
    perm = tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a permutation"):
        run(tf.transpose(x, perm), {x: np.ones((2, 3), np.float32), perm: [0, 2]})


def test_invert_permutation():
    perm = tf.placeholder(tf.int64, [None])
    got = run([tf.invert_permutation([2, 0, 3, 1]), tf.invert_permutation(perm)], {perm: [1, 2, 0]})
    assert_same(got[0], np.array([1, 3, 0, 2], np.int32))
    assert_same(got[1], np.array([2, 0, 1], np.int64))
    assert constant_value(tf.invert_permutation(tf.constant([1, 0]))).tolist() == [1, 0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a permutation"):
        run(tf.invert_permutation(perm), {perm: [0, 0]})


# ---- reverse and reverse_sequence -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_reverse_matches_numpy(dtype):
    a = sample((2, 3, 4), dtype)
    axes = tf.placeholder(tf.int64, [None])
    got = run([tf.reverse(a, [1]), tf.reverse_v2(a, [0, -1]), tf.reverse(a, []), tf.reverse(a, axes),
               tf.reverse(a, [False, True, True])], {axes: [2, 1]})
    for g, want in zip(got, [a[:, ::-1], a[::-1, :, ::-1], a, a[:, ::-1, ::-1], a[:, ::-1, ::-1]]):
        assert_same(g, want)


def test_reverse_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="out of range"):
        tf.reverse(x, [2])
    with pytest.raises(ValueError, match="more than once"):
        tf.reverse(x, [0, -2])
    axes = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than once"):
        run(tf.reverse(x, axes), {x: np.ones((2, 3), np.float32), axes: [1, 1]})


def reverse_sequence_reference(x, lengths, seq_axis, batch_axis):
    out = x.copy()
    for b, n in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch_axis], index[seq_axis] = b, slice(0, n)
        out[tuple(index)] = np.flip(x[tuple(index)], seq_axis - (batch_axis < seq_axis))
    return out


@pytest.mark.parametrize("dtype", ["float16", "float64", "int64", "string"])
@pytest.mark.parametrize("seq_axis, batch_axis", [(1, 0), (0, 1), (2, 1), (-1, 0)])
def test_reverse_sequence_matches_a_loop(dtype, seq_axis, batch_axis):
    a = sample((3, 4, 5) if batch_axis == 0 else (4, 3, 5), dtype)
    steps = a.shape[seq_axis]
    lengths = np.array([0, steps, 2], np.int64)
    got = run(tf.reverse_sequence(a, lengths, seq_axis=seq_axis, batch_axis=batch_axis))
    assert_same(got, reverse_sequence_reference(a, lengths, seq_axis % 3, batch_axis))


def test_reverse_sequence_old_argument_names_and_errors():
    a = sample((2, 4), "float32")
    assert_same(run(tf.reverse_sequence(a, [4, 1], seq_dim=1, batch_dim=0)), np.stack([a[0, ::-1], a[1]]))
    with pytest.raises(ValueError, match="both 'seq_axis' and 'seq_dim'"):
        tf.reverse_sequence(a, [1, 1], seq_axis=1, seq_dim=1)
    with pytest.raises(ValueError, match="must differ"):
        tf.reverse_sequence(a, [1, 1], seq_axis=0)
    with pytest.raises(ValueError, match="3 entries.*batch dimension 0 has size 2"):
        tf.reverse_sequence(a, [1, 1, 1], seq_axis=1)
    lengths = tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"must lie in \[0, 4\]"):
        run(tf.reverse_sequence(a, lengths, seq_axis=1), {lengths: [5, 1]})


# ---- pad ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_constant_pad_matches_numpy(dtype):
    a = sample((2, 3), dtype)
    paddings = [[1, 0], [2, 3]]
    zero = np.zeros((), a.dtype) if dtype != "string" else b""
    fill = sample((), dtype, 5)[()]
    got = run([tf.pad(a, paddings), tf.pad(a, np.array(paddings, np.int64), constant_values=fill)])
    assert_same(got[0], np.pad(a, paddings, constant_values=zero))
    assert_same(got[1], np.pad(a, paddings, constant_values=fill))


@pytest.mark.parametrize("mode", ["REFLECT", "symmetric", "Reflect"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int32", "bool", "string"])
def test_mirror_pad_matches_numpy(mode, dtype):
    a = sample((3, 4), dtype)
    paddings = [[2, 1], [0, 3]]
    assert_same(run(tf.pad(a, paddings, mode)), np.pad(a, paddings, mode=mode.lower()))


def test_pad_with_run_time_shapes_and_paddings():
    x, paddings = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.int32, [2, 2])
    assert tf.pad(x, [[1, 1], [2, 0]]).shape.as_list() == [None, 5]
    assert tf.pad(x, paddings).shape.as_list() == [None, None]
    assert tf.pad(tf.placeholder(tf.float32), [[1, 1]]).shape.as_list() == [None]
    a = sample((2, 3), "float32")
    got = run([tf.pad(x, paddings), tf.pad(x, paddings, "SYMMETRIC")], {x: a, paddings: [[0, 2], [1, 1]]})
    assert_same(got[0], np.pad(a, [[0, 2], [1, 1]]))
    assert_same(got[1], np.pad(a, [[0, 2], [1, 1]], "symmetric"))


def test_pad_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="'CONSTANT', 'REFLECT', 'SYMMETRIC'.*'wrap'"):
        tf.pad(x, [[1, 1], [1, 1]], mode="wrap")
    with pytest.raises(ValueError, match=r"shape \[rank, 2\] = \[2, 2\]"):
        tf.pad(x, [[1, 1]])
    with pytest.raises(ValueError, match="non-negative"):
        tf.pad(x, [[1, -1], [0, 0]])
    with pytest.raises(ValueError, match="REFLECT padding of dimension 1 .size 3. by .3, 0. is too large"):
        tf.pad(x, [[0, 0], [3, 0]], "REFLECT")
    assert tf.pad(x, [[0, 0], [3, 0]], "SYMMETRIC").shape.as_list() == [2, 6]
    with pytest.raises(ValueError, match="constant_values must be a scalar"):
        tf.pad(x, [[0, 0], [1, 0]], constant_values=[1.0, 2.0])
    paddings = tf.placeholder(tf.int32, [2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="too large"):
        run(tf.pad(x, paddings, "SYMMETRIC"), {x: np.ones((2, 3), np.float32), paddings: [[3, 0], [0, 0]]})


# ---- tile -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_matches_numpy(dtype):
    a = sample((2, 3), dtype)
    multiples = tf.placeholder(tf.int64, [2])
    got = run([tf.tile(a, [2, 3]), tf.tile(a, multiples), tf.tile(a, [0, 1]), tf.tile(np.asarray(a[0, 0]), [])],
              {multiples: [1, 2]})
    for g, want in zip(got, [np.tile(a, [2, 3]), np.tile(a, [1, 2]), a[:0], np.asarray(a[0, 0])]):
        assert_same(g, want)


def test_tile_static_shapes():
    x = tf.placeholder(tf.float32, [None, 3])
    n = tf.placeholder(tf.int32, [])
    assert tf.tile(x, [2, 2]).shape.as_list() == [None, 6]
    assert tf.tile(x, tf.stack([n, 4])).shape.as_list() == [None, 12]
    assert tf.tile(tf.placeholder(tf.float32), [2, 3]).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="multiples has 3 entries, but the input has rank 2"):
        tf.tile(x, [1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        tf.tile(x, [1, -2])
    multiples = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="one entry per dimension"):
        run(tf.tile(x, multiples), {x: np.ones((1, 3), np.float32), multiples: [2]})


# ---- gradients ------------------------------------------------------------------------------------------------------
def test_transpose_and_reverse_gradients():
    x, known = tf.placeholder(tf.float64, [None, None, None]), tf.placeholder(tf.float64, [2, 3, 4])
    perm, axes = tf.placeholder(tf.int32, [3]), tf.placeholder(tf.int32, [None])
    a = sample((2, 3, 4), "float64")
    assert gradient_error([known], tf.transpose(known, [2, 0, 1]), {known: a}) < 1e-9
    assert gradient_error([x], tf.transpose(x, perm) * 2, {x: a, perm: [1, 2, 0]}) < 1e-9
    assert gradient_error([x], tf.reverse(x, axes), {x: a, axes: [0, 2]}) < 1e-9
    lengths = np.array([2, 3], np.int64)
    assert gradient_error([known], tf.reverse_sequence(known, lengths, seq_axis=2), {known: a}) < 1e-9


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_gradients(mode):
    x, unknown = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [None, None])
    paddings = tf.placeholder(tf.int64, [2, 2])
    a = sample((2, 3), "float64")
    assert gradient_error([x], tf.pad(x, [[1, 1], [2, 1]], mode), {x: a}) < 1e-9
    assert gradient_error([unknown], tf.pad(unknown, paddings, mode), {unknown: a, paddings: [[1, 0], [2, 2]]}) < 1e-9
    if mode == "CONSTANT":
        assert gradient_error([unknown], tf.pad(unknown, [[0, 2], [1, 0]], constant_values=2.5), {unknown: a}) < 1e-9


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad_second_gradient(mode):
    """MirrorPadGrad's gradient is MirrorPad again: d/dg of <g, mirror_pad_grad(...)>."""
    x = tf.constant(sample((3, 4), "float64"))
    g = tf.placeholder(tf.float64, [5, 7])
    first = tf.gradients(tf.pad(x, [[1, 1], [2, 1]], mode), x, grad_ys=g)[0]
    assert first.op.type == "MirrorPadGrad"
    assert gradient_error([g], first * first, {g: sample((5, 7), "float64", 1)}) < 1e-8


def test_tile_gradients():
    x, unknown, unranked = (tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [None, 3]),
                            tf.placeholder(tf.float64))
    multiples = tf.placeholder(tf.int64, [None])
    a = sample((2, 3), "float64")
    assert gradient_error([x], tf.tile(x, [2, 3]), {x: a}) < 1e-9
    assert gradient_error([unknown], tf.tile(unknown, [3, 1]) * 2, {unknown: a}) < 1e-9
    assert gradient_error([unranked], tf.tile(unranked, multiples), {unranked: a, multiples: [2, 2]}) < 1e-9
