"""TF 1.15's smaller public ops against the values real TensorFlow computed (tests/fixtures/tf1/breadth_programs.py,
made by make_breadth.py): tf.math's trigonometric, hyperbolic, Bessel and log-space functions, tf.bitwise, roll,
bitcast, bincount, histograms, searchsorted, sets, tensor_scatter_nd_*, tf.strings and tf.lookup, with their
gradients, fed through placeholders of unknown shape."""

import importlib.util

import numpy as np
import pytest
from tf1_fixtures import FOLDER, array, load

import tensorweave as tf

CASES = load("breadth")
_spec = importlib.util.spec_from_file_location("breadth_programs", FOLDER / "breadth_programs.py")
programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(programs)


def _assert_same(got, expected, where):
    if isinstance(expected, dict):
        assert isinstance(got, tf.SparseTensorValue), where
        for part in ("indices", "values", "dense_shape"):
            _assert_same(getattr(got, part), expected[part], f"{where}.{part}")
        return
    if isinstance(got, list):
        assert len(got) == len(expected), where
        for i, (g, w) in enumerate(zip(got, expected)):
            _assert_same(g, w, f"{where}[{i}]")
        return
    got = np.asarray(got)
    if got.dtype == object or got.dtype.kind == "S":
        assert got.tolist() == _encoded(expected), where
        return
    want = array(expected)
    assert got.shape == want.shape, f"{where}: shape {got.shape}, TF1 {want.shape}"
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=where)


def _encoded(value):
    if isinstance(value, list):
        return [_encoded(v) for v in value]
    return value.encode("latin-1") if isinstance(value, str) else value


@pytest.mark.parametrize("name", sorted(programs.PROGRAMS))
def test_program_matches_tf1(name):
    fetches, feed = programs.PROGRAMS[name](tf)
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        got = s.run(fetches, feed)
    expected = CASES[name]
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        _assert_same(got[key], want, f"{name}/{key}")


def test_bessel_i1_gradient_at_zero_is_one_half_as_tf1_builds_it():
    x = tf.placeholder(tf.float64, [3])
    grad = tf.gradients(tf.reduce_sum(tf.math.bessel_i1(x)), x)[0]
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(grad, {x: [0.0, 1e-20, -1e-20]}), [0.5, 0.5, 0.5])


def test_zeta_and_betainc_give_no_gradient_to_their_order_arguments_as_tf1():
    a = tf.placeholder(tf.float64, [3])
    loss = tf.reduce_sum(tf.math.zeta(a + 1.5, 2.0)) + tf.reduce_sum(tf.math.betainc(a, a + 1.0, 0.5))
    assert tf.gradients(loss, a) == [None]


def test_a_substring_position_past_the_end_fails_as_tf1():
    out = tf.substr(tf.constant(["ab", ""]), 1, 1)
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        s.run(out)


def test_a_string_that_is_not_a_number_names_itself():
    out = tf.string_to_number(tf.constant(["1.5", "abc"]))
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="abc"):
        s.run(out)


def test_ops_on_tensors_of_unknown_rank_keep_the_static_shapes_tf1_gives():
    x = tf.placeholder(tf.float32)
    assert tf.roll(x, 1, 0).shape.ndims is None
    assert tf.bitcast(tf.placeholder(tf.int32, [2, 3]), tf.uint8).shape.as_list() == [2, 3, 4]
    assert tf.bitcast(tf.placeholder(tf.uint8, [5, 4]), tf.float32).shape.as_list() == [5]
    with pytest.raises(ValueError, match="last dimension of 4"):
        tf.bitcast(tf.placeholder(tf.uint8, [5, 3]), tf.float32)
    assert tf.unravel_index(tf.placeholder(tf.int32, [7]), [3, 4]).shape.as_list() == [2, 7]
    words = tf.placeholder(tf.string)
    with tf.Session() as s:
        assert s.run(tf.reduce_join(words, separator="/"), {words: [[b"a", b"b"], [b"c", b"d"]]}) == b"a/b/c/d"


def test_the_tf_namespaces_hold_tf1s_names():
    assert tf.math.tan is tf.tan and tf.manip.roll is tf.roll
    assert tf.strings.to_hash_bucket_fast is tf.string_to_hash_bucket_fast
    assert tf.strings.join is tf.string_join and tf.strings.reduce_join is tf.reduce_join
    assert tf.sets.intersection is tf.sets.set_intersection
    assert tf.math.softplus is tf.nn.softplus and tf.math.bincount is tf.bincount
