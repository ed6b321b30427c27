"""The rest of TF 1.15's tf.sparse against TensorFlow's numbers (programs in
tests/fixtures/tf1/sparse_more_programs.py, values from make_sparse_more.py): slice (and its gradient), split,
maximum/minimum, reduce_max(_sparse), eye, expand_dims, reset_shape, SparseTensor * and / with TF's broadcasting
and gradients, SparseTensors returned by tf.cond branches and carried by tf.while_loop; then the static shapes,
the errors, and what the fixture cannot hold."""

import numpy as np
import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf

CASES = load("sparse_more")
programs = programs_module("sparse_more_programs")
IDX, VALS, SHAPE = programs.IDX, programs.VALS, programs.SHAPE


def _sp(values=VALS):
    return tf.SparseTensor(IDX, values, SHAPE)


@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_program_matches_tf1(name):
    fetches, feed = programs.PROGRAMS[name](tf)
    with tf.Session() as s:
        got = s.run(fetches, feed)
    assert_matches(got, CASES[name], name, rtol=1e-5, atol=1e-6)


def test_static_shapes_as_tf1_or_more_precise():
    got = {k: str(v) for k, v in programs.static_shapes(tf).items()}
    want = CASES["static_shapes"]
    assert sorted(got) == sorted(want)
    for key in want:
        if want[key] != "<unknown>":  # where TF knows nothing, knowing the rank is no difference
            assert got[key] == want[key], key
    assert got["split"] == "<unknown>" and got["mul_unknown"] == "<unknown>"


@pytest.mark.parametrize("case, build", [
    ("split_more_pieces_than_rows", lambda: tf.sparse.split(sp_input=_sp(), num_split=5, axis=1)[0].values),
    ("maximum_shapes_differ", lambda: tf.sparse.maximum(_sp(), tf.SparseTensor([[0, 0]], [1.0], [3, 5])).values),
    ("mul_does_not_broadcast", lambda: (_sp() * tf.ones([5])).values),
    ("mul_dense_side_only", lambda: (tf.SparseTensor([[0, 0]], [1.0], [1, 4]) * tf.ones([3, 4])).values),
])
def test_misuses_fail_when_run_as_tf1(case, build):
    with tf.Session() as s, pytest.raises(tf.errors.OpError) as info:
        s.run(build())
    assert type(info.value).__name__ == CASES["errors"][case]["class"]


@pytest.mark.parametrize("case, build, match", [
    ("split_positional", lambda: tf.sparse_split(_sp(), 2, 1), "Keyword arguments are required"),
    ("convert_to_tensor", lambda: tf.convert_to_tensor(_sp()), "Failed to convert elements of SparseTensor"),
    ("while_invariant_of_rank_2", lambda: tf.while_loop(
        lambda i, x: i < 1, lambda i, x: (i + 1, x), [0, _sp()],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, None])]), "shape of its dense_shape"),
    ("cond_sparse_and_dense", lambda: tf.cond(tf.constant(True), lambda: _sp(), lambda: _sp().values),
     "same structure"),
])
def test_misuses_fail_while_building_as_tf1(case, build, match):
    with pytest.raises(Exception, match=match) as info:
        build()
    assert type(info.value).__name__ == CASES["errors"][case]["class"]


@pytest.mark.parametrize("case", ["reduce_max", "split"])
def test_ops_tf1_gives_no_gradient_refuse_one(case):
    values = tf.constant(VALS)
    sp = tf.SparseTensor(IDX, values, SHAPE)
    out = tf.sparse.reduce_max(sp) if case == "reduce_max" else \
        tf.sparse.split(sp_input=sp, num_split=2, axis=1)[0].values
    with pytest.raises(LookupError, match="no gradient defined"):
        tf.gradients(tf.reduce_sum(out), values)
    assert CASES["gradient_errors"][case]["class"] == "LookupError"


def test_maximum_has_no_gradient():
    """TF registers one that cannot run (a TypeError about its arguments); this says what is missing."""
    values = tf.constant(VALS)
    sp = tf.SparseTensor(IDX, values, SHAPE)
    with pytest.raises(NotImplementedError, match="Gradient for SparseSparseMaximum is not implemented"):
        tf.gradients(tf.reduce_sum(tf.sparse.maximum(sp, sp).values), values)
    assert CASES["gradient_errors"]["maximum"]["class"] == "TypeError"


def test_split_takes_the_old_split_dim_spelling():
    """TF 1.15 kept ``split_dim`` as a deprecated name of ``axis`` (its check for ``axis`` came first and refused
    it alone; programs of TF's first API pass it alone, so it is taken)."""
    by_axis = tf.sparse_split(sp_input=_sp(), num_split=2, axis=1)
    by_split_dim = tf.sparse_split(split_dim=1, num_split=2, sp_input=_sp())
    with tf.Session() as s:
        a, b = s.run([by_axis, by_split_dim])
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.indices, y.indices)
        np.testing.assert_array_equal(x.values, y.values)
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.sparse_split(sp_input=_sp(), num_split=2, axis=1, split_dim=0)


def test_the_new_tf_sparse_names_are_the_top_level_functions():
    pairs = {"slice": tf.sparse_slice, "split": tf.sparse_split, "maximum": tf.sparse_maximum,
             "minimum": tf.sparse_minimum, "reduce_max": tf.sparse_reduce_max,
             "reduce_max_sparse": tf.sparse_reduce_max_sparse, "reset_shape": tf.sparse_reset_shape}
    for name, fn in pairs.items():
        assert getattr(tf.sparse, name) is fn, name
    assert callable(tf.sparse.eye) and callable(tf.sparse.expand_dims)


def test_sparse_tensor_methods_as_tf1():
    sp = tf.sparse_placeholder(tf.float32, shape=[3, 4])
    total = tf.sparse_reduce_sum(sp)
    scaled = sp * 2.0
    consumers = sp.consumers()
    assert total.op in consumers and scaled.values.op in consumers and len(consumers) == len(set(consumers))
    assert sp.get_shape().as_list() == [3, 4] and scaled.get_shape().as_list() == [3, 4]
    copy = tf.identity(sp)
    assert isinstance(copy, tf.SparseTensor) and copy.get_shape().as_list() == [3, 4]
    with tf.Session():
        value = scaled.eval({sp: (IDX, VALS, SHAPE)})
    np.testing.assert_allclose(value.values, 2 * VALS)


def test_a_python_object_is_not_a_string_constant():
    class Thing:
        pass

    with pytest.raises(TypeError, match="Failed to convert elements of"):
        tf.constant(Thing())
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.add(_sp(), 1.0)


def test_cond_of_sparse_tensors_keeps_what_both_branches_agree_on():
    """TF 2's compat.v1 gives the true branch's static shape (wrong when the false branch runs); TF 1.15's
    SparseTensor knew none; this keeps what holds for either branch."""
    flag = tf.placeholder(tf.bool, [])
    chosen = tf.cond(flag, lambda: _sp(), lambda: tf.SparseTensor([[1, 1]], [7.0], [2, 4]))
    assert chosen.get_shape().as_list() == [None, 4]
    with tf.Session() as s:
        assert s.run(chosen, {flag: False}).dense_shape.tolist() == [2, 4]
        assert s.run(chosen, {flag: True}).dense_shape.tolist() == [3, 4]


def test_a_sparse_placeholder_through_a_while_loop_with_unknown_rank():
    sp = tf.sparse_placeholder(tf.float32)

    def body(i, acc):
        return i + 1, tf.sparse.concat(0, [acc, tf.sparse.slice(sp, [0, 0], [1, 4])])

    _, grown = tf.while_loop(lambda i, acc: i < 2, body, [0, sp], shape_invariants=[tf.TensorShape([]),
                                                                                  tf.TensorShape([None])])
    with tf.Session() as s:
        value = s.run(grown, {sp: (IDX, VALS, SHAPE)})
    assert value.dense_shape.tolist() == [5, 4]
    np.testing.assert_allclose(value.values, [1.0, -2.0, 3.0, 0.5, 1.0, -2.0, 1.0, -2.0])


def test_sparse_times_a_scalar_tensor_has_a_gradient():
    """TF's gradient fails on a 0-d dense operand (gather_nd of a scalar); the values' gradient is still the
    scalar, and the scalar's is the sum of the entries."""
    values, scale = tf.constant(VALS), tf.constant(3.0)
    out = tf.SparseTensor(IDX, values, SHAPE) * scale
    grads = tf.gradients(tf.reduce_sum(out.values), [values, scale])
    with tf.Session() as s:
        d_values, d_scale = s.run(grads)
    np.testing.assert_allclose(d_values, [3.0] * 4)
    assert d_scale == pytest.approx(VALS.sum())


def test_reduce_max_of_a_huge_sparse_tensor_keeps_to_its_entries():
    sp = tf.SparseTensor([[0, 2], [2 ** 40, 0], [2 ** 40, 2]], [1.0, -2.0, 4.0], [2 ** 41, 3])
    with tf.Session() as s:
        assert s.run(tf.sparse.reduce_max(sp)) == 4.0
        np.testing.assert_array_equal(s.run(tf.sparse.reduce_max(sp, 0)), [-2.0, 0.0, 4.0])
        slice_value = s.run(tf.sparse.slice(sp, [2 ** 40, 1], [1, 2]))
    assert slice_value.indices.tolist() == [[0, 1]] and slice_value.values.tolist() == [4.0]


def test_reset_shape_refuses_a_smaller_shape_while_building_or_when_run():
    with pytest.raises(ValueError, match="dimension sizes >= sp_input.shape"):
        tf.sparse_reset_shape(_sp(), [2, 4])
    new_shape = tf.placeholder(tf.int64, [2])
    grown = tf.sparse_reset_shape(_sp(), new_shape)
    with tf.Session() as s:
        assert s.run(grown, {new_shape: [5, 4]}).dense_shape.tolist() == [5, 4]
        with pytest.raises(tf.errors.InvalidArgumentError):
            s.run(grown, {new_shape: [3, 3]})


def test_a_sparse_loop_variable_with_maximum_iterations():
    def body(acc):
        return tf.sparse.add(acc, acc)

    doubled = tf.while_loop(lambda acc: tf.sparse.reduce_sum(acc) < 1e9, body, [_sp()], maximum_iterations=3)
    with tf.Session() as s:
        value = s.run(doubled)
    np.testing.assert_allclose(value.values, 8 * VALS)


def test_cross_hashed_refuses_negative_buckets():
    words = tf.SparseTensor([[0, 0]], ["a"], [1, 1])
    with pytest.raises(ValueError, match="num_buckets must be 0"):
        tf.sparse.cross_hashed([words, words], num_buckets=-1)
