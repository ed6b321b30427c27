"""Feeding placeholders: every integer dtype at its bounds and one past them, numpy arrays of wider dtypes,
booleans, float16 overflow and ragged lists, against real TensorFlow (tests/fixtures/tf1/make_feed_conversion.py).

Where TF1 silently wraps a Python number (a list: [1, 2**33] fed to int32 gave [1, 0]) or turns a Python float
into inf, the feed is refused naming the placeholder, the value and the dtype's range."""

import re

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

TF1 = load("feed_conversion")
INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def feed(dtype, value, shape=None, name="ph"):
    p = tf.placeholder(getattr(tf, dtype), shape=shape, name=name)
    with tf.Session() as s:
        return s.run(tf.identity(p), {p: value})


def assert_tf1(got, case):
    want = TF1[case]
    assert np.asarray(got).dtype.name == want["dtype"], (case, got)
    np.testing.assert_array_equal(got, array(want["value"], want["dtype"]))


def bounds(dtype):
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_python_ints_at_the_bounds_are_fed_exactly(dtype):
    lo, hi = bounds(dtype)
    for case, value in [("min_scalar", lo), ("max_scalar", hi), ("bounds_list", [lo, hi]),
                        ("bounds_nested_list", [[lo], [hi]])]:
        got = feed(dtype, value)
        np.testing.assert_array_equal(got, np.array(value, dtype))
        assert np.asarray(got).dtype == np.dtype(dtype)
        if dtype != "uint64" or "list" not in case:  # TF1's list path turns 2**64-1 into 0 for uint64
            assert_tf1(got, f"{dtype}_{case}")


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("side", ["over", "under"])
def test_python_int_one_past_a_bound_is_refused_naming_tensor_value_and_range(dtype, side):
    lo, hi = bounds(dtype)
    number = hi + 1 if side == "over" else lo - 1
    # TF1 refuses the scalar with TypeError (its own conversion overflows first past 64 bits)
    assert TF1[f"{dtype}_{side}_scalar"]["error"] in ("TypeError", "OverflowError")
    for value, where in [(number, ""), ([0, number], r" \(at index \[1\]\)"),
                         ([[number], [0]], r" \(at index \[0, 0\]\)")]:
        tf.reset_default_graph()
        with pytest.raises(TypeError, match=rf"cannot feed {number}{where} to tensor 'ids:0' of dtype {dtype}, "
                                            rf"whose values range from {lo} to {hi}: it would wrap around"):
            feed(dtype, value, name="ids")


@pytest.mark.parametrize("dtype", INTEGERS)
def test_numpy_values_of_a_wider_dtype_are_cast_as_tf1_casts_them(dtype):
    lo, hi = bounds(dtype)
    if dtype == "int64":
        wide = np.array([1, 2 ** 64 - 1], np.uint64)
    elif dtype == "uint64":
        wide = np.array([1, -1], np.int64)
    else:
        wide = np.array([lo - 1, 1, hi + 1], np.int64)
    assert_tf1(feed(dtype, wide), f"{dtype}_wider_numpy_array")
    if dtype not in ("int64", "uint64"):
        tf.reset_default_graph()
        assert_tf1(feed(dtype, np.int64(hi + 1)), f"{dtype}_wider_numpy_scalar")


def test_issue_examples():
    with pytest.raises(TypeError, match="8589934592"):
        feed("int32", [1, 2 ** 33])
    tf.reset_default_graph()
    with pytest.raises(TypeError, match="300"):
        feed("int8", [1, 300])
    tf.reset_default_graph()
    np.testing.assert_array_equal(feed("uint8", [0, 200, 255]), np.array([0, 200, 255], np.uint8))


@pytest.mark.parametrize("case,dtype,value", [
    ("bools_into_int32", "int32", [True, False]),
    ("bools_into_float32", "float32", [True, False]),
    ("ints_into_bool", "bool", [1, 0, 2]),
    ("numpy_ints_into_bool", "bool", np.array([0, 3], np.int32)),
    ("python_floats_into_float16", "float16", [1.5, 65504.0]),
    ("python_ints_into_float16", "float16", [1, 2048]),
    ("float16_overflow_from_numpy", "float16", np.array([1.0, 70000.0])),
    ("float32_overflow_from_numpy", "float32", np.array([1.0, 1e300])),
])
def test_booleans_and_floats_as_tf1(case, dtype, value):
    assert_tf1(feed(dtype, value), case)


@pytest.mark.parametrize("dtype,value,number,where", [
    ("float16", 70000.0, "70000.0", ""),
    ("float16", 65520.0, "65520.0", ""),  # the first value that rounds to inf
    ("float16", -100000, "-100000", ""),
    ("float16", [1.0, 70000.0], "70000.0", r" \(at index \[1\]\)"),
    ("float16", [[1], [100000]], "100000", r" \(at index \[1, 0\]\)"),
    ("float32", [1e300], "1e\\+300", r" \(at index \[0\]\)"),
])
def test_python_number_overflowing_to_inf_is_refused(dtype, value, number, where):
    top = "65504.0" if dtype == "float16" else "3.40282"
    with pytest.raises(TypeError, match=rf"cannot feed {number}{where} to tensor 'scale:0' of dtype {dtype}, whose "
                                        rf"largest finite value is {top}.*: it would become inf"):
        feed(dtype, value, name="scale")


def test_largest_values_that_round_to_a_finite_number_are_fed():
    np.testing.assert_array_equal(feed("float16", [65519.0, -65519]), np.array([65504, -65504], np.float16))
    tf.reset_default_graph()
    assert feed("float16", 65519.0) == np.float16(65504)


def test_infinities_and_nan_given_as_python_floats_are_fed():
    got = feed("float16", [float("inf"), float("-inf"), float("nan")])
    assert np.isposinf(got[0]) and np.isneginf(got[1]) and np.isnan(got[2])


def test_python_ints_beyond_64_bits_are_refused_or_fed_as_floats():
    with pytest.raises(TypeError, match="cannot feed 36893488147419103232 \\(at index \\[1\\]\\)"):
        feed("uint64", [1, 2 ** 65])
    tf.reset_default_graph()
    with pytest.raises(TypeError, match="cannot feed -1 \\(at index \\[0\\]\\) to tensor 'ph:0' of dtype uint64"):
        feed("uint64", [-1, 2 ** 63])  # numpy would make floats of this list
    tf.reset_default_graph()
    np.testing.assert_array_equal(feed("float32", [1, 2 ** 65]), np.array([1, 2.0 ** 65], np.float32))


@pytest.mark.parametrize("dtype,value,shape,detail", [
    ("int32", [[1, 2], [3]], [None, 2], r"\[0\] has shape \(2,\) but \[1\] has shape \(1,\)"),
    ("float32", [[1.0], [2.0, 3.0]], None, r"\[0\] has shape \(1,\) but \[1\] has shape \(2,\)"),
    ("float32", [[[1.0], [2.0]], [[3.0], [4.0, 5.0]]], None, r"\[1\]\[0\] has shape \(1,\) but \[1\]\[1\] has shape"),
    ("float32", [1.0, [2.0]], None, r"\[0\] has shape \(\) but \[1\] has shape \(1,\)"),
    ("string", [["a", "b"], ["c"]], None, r"\[0\] has shape \(2,\) but \[1\] has shape \(1,\)"),
])
def test_ragged_list_names_the_placeholder_and_the_shapes(dtype, value, shape, detail):
    assert TF1["ragged_list"]["error"] == "ValueError"
    shape_text = re.escape("[?, 2]" if shape else "<unknown>")
    with pytest.raises(ValueError, match=rf"cannot feed a ragged list to tensor 'rows:0' \(shape {shape_text}, "
                                         rf"dtype {dtype}\): {detail}"):
        feed(dtype, value, shape=shape, name="rows")


def test_floats_still_do_not_feed_integers():
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype float64 to tensor 'ph:0' of dtype int32"):
        feed("int32", [1.5, 2.0])


def test_make_callable_converts_as_run_does():
    p = tf.placeholder(tf.uint8, [None])
    with tf.Session() as s:
        f = s.make_callable(tf.identity(p), [p])
        np.testing.assert_array_equal(f([0, 200, 255]), np.array([0, 200, 255], np.uint8))
        with pytest.raises(TypeError, match="cannot feed 256"):
            f([256])

