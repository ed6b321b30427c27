"""Sparse tensors as TF1 has them: the programs of tests/fixtures/tf1/sparse_programs.py (placeholders fed both
ways, to_dense, sparse_to_dense, dense matmul with each adjoint, add, reduce_sum, softmax, concat, reshape,
retain, transpose, reorder, fill_empty_rows, embedding_lookup_sparse with each combiner, string_split, and
their gradients) against the values TensorFlow computed (make_sparse.py); feeds, static shapes, errors, the
tf.sparse names, and sparse ops inside tf.cond / tf.while_loop."""

import numpy as np
import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf

CASES = load("sparse")
programs = programs_module("sparse_programs")
IDX, VALS, SHAPE = programs.IDX, programs.VALS, programs.SHAPE


@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_program_matches_tf1(name):
    fetches, feed = programs.PROGRAMS[name](tf)
    with tf.Session() as s:
        got = s.run(fetches, feed)
    assert_matches(got, CASES[name], name, rtol=1e-5, atol=1e-6)


def test_static_shapes_as_tf1():
    expected = CASES["static_shapes"]
    partial = tf.sparse_placeholder(tf.float32, shape=[None, 4])
    assert str(partial.get_shape()) == expected["partial"]
    assert str(tf.sparse_placeholder(tf.float32, shape=[3, 4]).get_shape()) == expected["fixed"]
    assert str(tf.sparse_placeholder(tf.float32).get_shape()) == expected["unknown"]
    assert str(tf.sparse_tensor_dense_matmul(partial, tf.ones([4, 2])).shape) == expected["matmul"]


@pytest.mark.parametrize("case, build", [
    ("matmul_index_out_of_range",
     lambda: tf.sparse_tensor_dense_matmul(tf.SparseTensor([[0, 5]], [1.0], [2, 4]), tf.ones([4, 2]))),
    ("to_dense_unordered", lambda: tf.sparse_tensor_to_dense(tf.SparseTensor([[1, 0], [0, 0]], [1.0, 2.0], [2, 2]))),
    ("to_dense_repeated", lambda: tf.sparse_tensor_to_dense(tf.SparseTensor([[0, 0], [0, 0]], [1.0, 2.0], [2, 2]))),
])
def test_bad_indices_fail_when_run_as_tf1(case, build):
    with tf.Session() as s, pytest.raises(tf.errors.OpError) as info:
        s.run(build())
    assert type(info.value).__name__ == CASES["errors"][case]["class"]
    assert "indices" in info.value.message or "index" in info.value.message


def test_inner_dimensions_that_differ_fail_while_building():
    with pytest.raises(ValueError, match="inner dimensions"):
        tf.sparse_tensor_dense_matmul(tf.SparseTensor([[0, 5]], [1.0], [2, 6]), tf.ones([4, 2]))
    assert CASES["errors"]["matmul_inner_dims_differ"]["class"] == "ValueError"


def test_a_sparse_placeholder_is_fed_with_a_value_a_tuple_or_a_list_and_refuses_others():
    sp = tf.sparse_placeholder(tf.float32, name="sp")
    x = tf.placeholder(tf.float32, [])
    total = tf.sparse_reduce_sum(sp) * x
    with tf.Session() as s:
        for value in (tf.SparseTensorValue(IDX, VALS, SHAPE), (IDX, VALS, SHAPE), [IDX, VALS, SHAPE],
                      (IDX.tolist(), VALS.tolist(), SHAPE.tolist())):
            assert s.run(total, {sp: value, x: 2.0}) == pytest.approx(5.0)
        with pytest.raises(TypeError, match="SparseTensorValue or an \\(indices, values, dense_shape\\) tuple"):
            s.run(total, {sp: (IDX, VALS), x: 2.0})
        with pytest.raises(TypeError, match="cannot be a tf.SparseTensor"):
            s.run(total, {sp: tf.SparseTensor(IDX, VALS, SHAPE), x: 2.0})
        echo = s.run(sp, {sp: (IDX, VALS, SHAPE)})
    assert isinstance(echo, tf.SparseTensorValue) and echo.dense_shape.tolist() == [3, 4]
    assert sp.indices.op.name == "sp/indices" and sp.values.op.name == "sp/values"


def test_make_callable_takes_a_sparse_placeholders_value_as_one_argument():
    sp = tf.sparse_placeholder(tf.float32)
    x = tf.placeholder(tf.float32, [])
    with tf.Session() as s:
        run = s.make_callable(tf.sparse_reduce_sum(sp, 1) * x, [x, sp])
        np.testing.assert_allclose(run(2.0, (IDX, VALS, SHAPE)), [-2.0, 0.0, 7.0])
        np.testing.assert_allclose(run(1.0, tf.SparseTensorValue(IDX, -VALS, SHAPE)), [1.0, 0.0, -3.5])


def test_reduce_sum_of_a_huge_sparse_tensor_never_builds_the_dense_one():
    sp = tf.SparseTensor([[0, 2], [2 ** 40, 0], [2 ** 40, 2]], [1.0, 2.0, 4.0], [2 ** 41, 3])
    with tf.Session() as s:
        assert s.run(tf.sparse_reduce_sum(sp)) == 7.0
        np.testing.assert_array_equal(s.run(tf.sparse_reduce_sum(sp, 0, keepdims=True)), [[2.0, 0.0, 5.0]])


def test_the_tf_sparse_names_are_the_top_level_functions():
    pairs = {"to_dense": tf.sparse_tensor_to_dense, "matmul": tf.sparse_tensor_dense_matmul,
             "sparse_dense_matmul": tf.sparse_tensor_dense_matmul, "add": tf.sparse_add,
             "reduce_sum": tf.sparse_reduce_sum, "reduce_sum_sparse": tf.sparse_reduce_sum_sparse,
             "softmax": tf.sparse_softmax, "concat": tf.sparse_concat, "reshape": tf.sparse_reshape,
             "retain": tf.sparse_retain, "transpose": tf.sparse_transpose, "reorder": tf.sparse_reorder,
             "fill_empty_rows": tf.sparse_fill_empty_rows, "placeholder": tf.sparse_placeholder,
             "merge": tf.sparse_merge, "to_indicator": tf.sparse_to_indicator,
             "SparseTensor": tf.SparseTensor}
    for name, fn in pairs.items():
        assert getattr(tf.sparse, name) is fn, name
    assert tf.compat.v1.sparse.to_dense is tf.sparse_tensor_to_dense


def test_from_dense_keeps_the_nonzero_entries():
    dense = np.array([[0.0, 1.5, 0.0], [-2.0, 0.0, 0.0]], np.float32)
    sp = tf.sparse.from_dense(dense)
    with tf.Session() as s:
        value = s.run(sp)
        back = s.run(tf.sparse.to_dense(sp))
    assert value.indices.tolist() == [[0, 1], [1, 0]] and value.values.tolist() == [1.5, -2.0]
    np.testing.assert_array_equal(back, dense)


def test_embedding_lookup_sparse_trains_a_variable_through_indexed_slices():
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    params = tf.Variable(table)
    ids = tf.sparse_placeholder(tf.int64)
    out = tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum")
    loss = tf.reduce_sum(out)
    assert isinstance(tf.gradients(loss, params)[0], tf.IndexedSlices)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    feed = {ids: ([[0, 0], [0, 1], [1, 0]], [1, 4, 1], [2, 2])}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(train, feed)
        after = s.run(params)
    expected = table.copy()
    expected[1] -= 0.5 * 2  # looked up twice
    expected[4] -= 0.5
    np.testing.assert_allclose(after, expected)


def test_string_split_to_dense_with_empty_strings_as_default():
    sp = tf.string_split(["a b", "c"])
    with tf.Session() as s:
        dense = s.run(tf.sparse_tensor_to_dense(sp, default_value=""))
    assert dense.tolist() == [[b"a", b"b"], [b"c", b""]]


def test_sparse_ops_in_cond_and_while_loop_on_captured_sparse_tensors():
    sp = tf.sparse_placeholder(tf.float32)
    b = tf.constant(programs.DENSE)
    flag = tf.placeholder(tf.bool, [])
    chosen = tf.cond(flag, lambda: tf.sparse_tensor_dense_matmul(sp, b),
                     lambda: tf.sparse_tensor_to_dense(tf.sparse_reshape(sp, [3, 4]))[:, :2])
    _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + tf.reshape(tf.sparse_reduce_sum(sp, 0), [4])),
                           [0, tf.zeros([4])])
    grad = tf.gradients(tf.reduce_sum(acc), sp.values)[0]
    feed = {sp: (IDX, VALS, SHAPE)}
    dense = np.zeros((3, 4), np.float32)
    dense[tuple(IDX.T)] = VALS
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(chosen, {**feed, flag: True}), dense @ programs.DENSE, rtol=1e-6)
        np.testing.assert_allclose(s.run(chosen, {**feed, flag: False}), dense[:, :2])
        np.testing.assert_allclose(s.run(acc, feed), 3 * dense.sum(0), rtol=1e-6)
        np.testing.assert_allclose(s.run(grad, feed), [3.0] * 4)
