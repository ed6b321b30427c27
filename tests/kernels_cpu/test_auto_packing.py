"""Auto-packing: a list or tuple mixing tensors with Python and numpy numbers, given where a tensor is expected,
becomes one Pack op in ``convert_to_tensor`` (TF1's conversion), for every op: values, dtypes and errors against
real TensorFlow (tests/fixtures/tf1/make_auto_packing.py)."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

TF1 = load("auto_packing")


def _x():
    return tf.zeros([2, 3], name="x")


def _n():
    return tf.shape(_x())[0]


CASES = {
    "shape_entry_and_int": lambda: tf.convert_to_tensor([_n(), 3]),
    "tile_by_batch": lambda: tf.tile(tf.reshape(tf.range(3.0), [1, 1, 3]), [_n(), 2, 1]),
    "tensor_plus_list": lambda: tf.constant([1, 2]) + [tf.constant(5), 3],
    "float_tensor_plus_list_of_int_tensor": lambda: tf.constant([1.0, 2.0]) + [tf.constant(5), 3],
    "float_tensor_and_int_literal": lambda: tf.convert_to_tensor([tf.constant(1.5), 3]),
    "int_tensor_and_numpy_int64": lambda: tf.convert_to_tensor([tf.constant(1), np.int64(3)]),
    "nested_lists": lambda: tf.convert_to_tensor([[tf.constant(1), 1], [2, 3]]),
    "vector_and_list": lambda: tf.convert_to_tensor([tf.constant([1, 2]), [3, 4]]),
    "vector_and_numpy_array": lambda: tf.convert_to_tensor([tf.constant([1, 2]), np.array([3, 4])]),
    "tuple": lambda: tf.convert_to_tensor((tf.constant(1), 2)),
    "requested_dtype_casts": lambda: tf.convert_to_tensor([tf.constant(1), 2], dtype=tf.int64),
    "reshape_by_int64_entry": lambda: tf.reshape(tf.range(6.0), [tf.constant(2, tf.int64), 3]),
    "reshape_by_runtime_entry": lambda: tf.reshape(tf.range(6.0), [_n(), -1]),
    "zeros_of_runtime_shape": lambda: tf.zeros([_n(), 2]),
    "fill_of_runtime_shape": lambda: tf.fill([_n(), 2], 7),
    "random_uniform_shape": lambda: tf.shape(tf.random_uniform([_n(), 4])),
    "concat_of_packed": lambda: tf.concat([[tf.constant(1), 2], [3]], 0),
    "stack_mixed": lambda: tf.stack([tf.constant(1), 2]),
    "slice_begin_mixed": lambda: tf.slice(tf.reshape(tf.range(6), [2, 3]), [0, tf.constant(1)], [2, 2]),
    "variable_inside": lambda: tf.convert_to_tensor([tf.Variable(1.5, name="v"), 2.0]),
}

ERRORS = {
    "mixed_dtypes": (lambda: tf.convert_to_tensor([tf.constant(1), tf.constant(2, tf.int64)]),
                     r"Cannot convert a list containing a tensor of dtype int64 to int32 \(Tensor is: .*Const_1:0"),
    "float_literal_in_int_list": (lambda: tf.convert_to_tensor([tf.constant(1), 3.5]), "3.5"),
    "string_in_int_list": (lambda: tf.convert_to_tensor([tf.constant(1), "a"]), "'a'"),
    "ragged_rows": (lambda: tf.convert_to_tensor([[tf.constant(1), 1], [2]]), r"shape \(2,\).*shape \(1,\)"),
    "scalar_and_vector": (lambda: tf.convert_to_tensor([tf.constant(1), [1, 2]]), r"shape \(\).*shape \(2,\)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_packs_as_tf1(case):
    want = TF1[case]
    t = CASES[case]()
    assert "Pack" in {op.type for op in t.graph.get_operations()}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        got = s.run(t)
    assert t.dtype.name == want["dtype"] and t.shape.as_list() == want["shape"]
    np.testing.assert_array_equal(got, array(want["value"], want["dtype"]))


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_refuses_as_tf1(case):
    build, message = ERRORS[case]
    with pytest.raises({"TypeError": TypeError, "ValueError": ValueError}[TF1[case]["error"]], match=message):
        build()


def test_placeholder_inside_keeps_its_static_shape_and_takes_its_feed():
    p = tf.placeholder(tf.int32, [], name="p")
    t = tf.convert_to_tensor([p, 2])
    assert t.shape.as_list() == TF1["fed_placeholder"]["shape"]
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(t, {p: 7}), TF1["fed_placeholder"]["value"])


def test_names_follow_tf1_scopes():
    p = tf.placeholder(tf.int32, [], name="p")
    tf.convert_to_tensor([p, 2])
    tf.convert_to_tensor([[p, 1], [2, 3]], name="grid")
    names = [op.name for op in tf.get_default_graph().get_operations() if op.type in ("Pack", "Const")]
    assert names[:4] == TF1["op_names"][:4] and names[-1] == TF1["op_names"][-1]


def test_gradient_flows_through_the_pack():
    a = tf.constant(2.0)
    y = tf.reduce_sum(tf.convert_to_tensor([a, 3.0 * a]) * tf.constant([1.0, 10.0]))
    with tf.Session() as s:
        assert s.run(tf.gradients(y, a)[0]) == TF1["gradient_through_pack"]


def test_list_without_tensors_stays_one_constant():
    t = tf.convert_to_tensor([[1, 2], [3, 4]])
    assert t.op.type == "Const" and t.dtype == tf.int32


def test_shape_helpers_no_longer_special_case_lists():
    """reshape, zeros, fill, the random ops and slicing took lists of tensors through their own stack calls;
    they now reach the one conversion, so an int64 entry keeps its dtype where the op allows it (as TF1)."""
    n64 = tf.cast(_n(), tf.int64)
    r = tf.reshape(tf.range(6.0), [n64, -1])
    assert r.op.inputs[1].dtype == tf.int64 and r.op.inputs[1].op.type == "Pack"
    with tf.Session() as s:
        assert s.run(r).shape == (2, 3)
        assert s.run(tf.zeros([n64, 2])).shape == (2, 2)
        assert s.run(tf.random_normal([n64, 5])).shape == (2, 5)


def test_float_entry_in_a_shape_list_is_cast_to_the_default_index_type():
    r = tf.reshape(tf.range(6.0), [tf.constant(2.0), 3])
    assert r.op.inputs[1].dtype == tf.int32
    with tf.Session() as s:
        assert s.run(r).shape == (2, 3)


def test_transformer_style_code_with_a_runtime_batch():
    x = tf.placeholder(tf.float32, [None, 5, 8])
    batch, length = tf.shape(x)[0], tf.shape(x)[1]
    heads = tf.transpose(tf.reshape(x, [batch, length, 2, 4]), [0, 2, 1, 3])
    merged = tf.reshape(tf.transpose(heads, [0, 2, 1, 3]), [batch, -1, 8])
    positions = tf.tile(tf.expand_dims(tf.range(5.0), 0), [batch, 1])
    mask = tf.ones([batch, 1, length])
    value = np.arange(3 * 5 * 8, dtype=np.float32).reshape(3, 5, 8)
    with tf.Session() as s:
        got_merged, got_positions, got_mask = s.run([merged, positions, mask], {x: value})
    np.testing.assert_array_equal(got_merged, value)
    np.testing.assert_array_equal(got_positions, np.tile(np.arange(5.0), (3, 1)))
    assert got_mask.shape == (3, 1, 5)


def test_packing_inside_cond_and_while_loop_with_captured_tensors():
    n = tf.placeholder(tf.int32, [])
    flag = tf.placeholder(tf.bool, [])
    shaped = tf.cond(flag, lambda: tf.zeros([n, 2]), lambda: tf.ones([2, n]))

    def body(i, total):
        return i + 1, total + tf.reduce_sum(tf.ones([n, i + 1]))

    _, total = tf.while_loop(lambda i, total: i < 3, body, [tf.constant(0), tf.constant(0.0)])
    with tf.Session() as s:
        assert s.run(shaped, {n: 4, flag: True}).shape == (4, 2)
        assert s.run(shaped, {n: 4, flag: False}).shape == (2, 4)
        assert s.run(total, {n: 2}) == 2 * (1 + 2 + 3)


def test_unknown_rank_tensor_inside_a_list_packs_at_run_time():
    u = tf.placeholder(tf.float32)  # rank unknown
    t = tf.convert_to_tensor([u, 2.0 * u])
    assert t.shape.ndims is None
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(t, {u: [1.0, 2.0]}), [[1.0, 2.0], [2.0, 4.0]])
