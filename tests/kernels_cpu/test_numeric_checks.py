"""tf.check_numerics, tf.verify_tensor_all_finite, tf.add_check_numerics_ops and tf.debugging.assert_* against real
TensorFlow (tests/fixtures/tf1/make_numeric_checks.py): the same programs, the same values, errors and messages.

The cases are built by the same code as the fixture script's (copied below, from ``const`` on), so each recorded
case runs here unchanged. Known differences from TF's text are deliberate and listed in ``_DIFFERENCES``.
"""

import re

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

TF1 = load("numeric_checks")
NAN, INF = float("nan"), float("inf")


def case(build, feed=None):
    return build, feed


def const(value, name, dtype=None):
    return tf.constant(value, dtype=dtype, name=name)


BINARY = {"equal": [1.0, 2.0, 3.0], "none_equal": [1.0, 2.0, 3.0], "less": [1.0, 2.0, 3.0],
          "less_equal": [1.0, 2.0, 3.0], "greater": [1.0, 2.0, 3.0], "greater_equal": [1.0, 2.0, 3.0]}
PASSING_Y = {"equal": [1.0, 2.0, 3.0], "none_equal": [4.0, 5.0, 6.0], "less": [2.0, 3.0, 4.0],
             "less_equal": [1.0, 3.0, 3.0], "greater": [0.0, 1.0, 2.0], "greater_equal": [1.0, 1.0, 3.0]}
FAILING_Y = {"equal": [1.0, 2.0, 4.0], "none_equal": [0.0, 2.0, 0.0], "less": [2.0, 2.0, 4.0],
             "less_equal": [1.0, 1.0, 3.0], "greater": [0.0, 2.0, 2.0], "greater_equal": [1.0, 3.0, 3.0]}
UNARY = {"positive": ([1.0, 2.0], [1.0, 0.0]), "negative": ([-1.0, -2.0], [-1.0, 0.0]),
         "non_negative": ([0.0, 2.0], [0.0, -1.0]), "non_positive": ([0.0, -2.0], [0.0, 1.0])}


def with_dep(assert_op, x):
    with tf.control_dependencies([assert_op]):
        return tf.identity(x)


def binary_cases():
    cases = {}
    for kind, xs in BINARY.items():
        fn = getattr(tf.debugging, f"assert_{kind}")
        for outcome, ys in (("passes", PASSING_Y[kind]), ("fails", FAILING_Y[kind])):
            cases[f"assert_{kind}_{outcome}_at_run"] = case(
                lambda ph, fn=fn: with_dep(fn(ph("x"), ph("y")), ph("z")),
                {"x": xs, "y": ys, "z": 1.0})
            cases[f"assert_{kind}_{outcome}_static"] = case(
                lambda ph, fn=fn, xs=xs, ys=ys: fn(const(xs, "a"), const(ys, "b")))
        cases[f"assert_{kind}_message_data_summarize"] = case(
            lambda ph, fn=fn: fn(ph("x"), ph("y"), message="custom", summarize=2),
            {"x": xs * 2, "y": FAILING_Y[kind] * 2})
        cases[f"assert_{kind}_with_data"] = case(
            lambda ph, fn=fn: fn(ph("x"), ph("y"), data=["values:", ph("v"), "end"]),
            {"x": xs, "y": FAILING_Y[kind], "v": [7, 8]})
    return cases


def unary_cases():
    cases = {}
    for kind, (good, bad) in UNARY.items():
        fn = getattr(tf.debugging, f"assert_{kind}")
        cases[f"assert_{kind}_passes_at_run"] = case(lambda ph, fn=fn: with_dep(fn(ph("x")), ph("z")),
                                                     {"x": good, "z": 1.0})
        cases[f"assert_{kind}_fails_at_run"] = case(lambda ph, fn=fn: fn(ph("x")), {"x": bad})
        cases[f"assert_{kind}_fails_static"] = case(lambda ph, fn=fn, bad=bad: fn(const(bad, "a")))
        cases[f"assert_{kind}_message"] = case(lambda ph, fn=fn: fn(ph("x"), message="custom"), {"x": bad})
        cases[f"assert_{kind}_int"] = case(lambda ph, fn=fn: fn(ph("x", tf.int32)), {"x": [int(v) for v in bad]})
    return cases


def rank_cases():
    return {
        "assert_rank_static_fails": case(lambda ph: tf.assert_rank(ph("x", shape=[2, 3]), 1)),
        "assert_rank_static_fails_message": case(lambda ph: tf.assert_rank(ph("x", shape=[2, 3]), 1, message="m")),
        "assert_rank_static_passes": case(lambda ph: with_dep(tf.assert_rank(ph("x", shape=[2, 3]), 2), 1.0)),
        "assert_rank_run_fails": case(lambda ph: tf.assert_rank(ph("x"), 1), {"x": [[1.0, 2.0]]}),
        "assert_rank_run_passes": case(lambda ph: with_dep(tf.assert_rank(ph("x"), 2), 1.0), {"x": [[1.0]]}),
        "assert_rank_of_vector_rank": case(lambda ph: tf.assert_rank(ph("x", shape=[2]), [1])),
        "assert_rank_at_least_static_fails": case(lambda ph: tf.assert_rank_at_least(ph("x", shape=[2]), 2)),
        "assert_rank_at_least_run_fails": case(lambda ph: tf.assert_rank_at_least(ph("x"), 3), {"x": [[1.0]]}),
        "assert_rank_at_least_run_passes": case(
            lambda ph: with_dep(tf.assert_rank_at_least(ph("x"), 1), 1.0), {"x": [[1.0]]}),
        "assert_rank_in_static_fails": case(lambda ph: tf.assert_rank_in(ph("x", shape=[2]), [0, 2])),
        "assert_rank_in_run_fails": case(lambda ph: tf.assert_rank_in(ph("x"), [0, 2]), {"x": [1.0]}),
        "assert_rank_in_run_passes": case(lambda ph: with_dep(tf.assert_rank_in(ph("x"), [0, 2]), 1.0),
                                          {"x": [[1.0]]}),
        "assert_rank_int64_rank": case(lambda ph: tf.assert_rank(ph("x", shape=[2]), tf.constant(1, tf.int64))),
    }


def static_cases():
    return {
        "assert_type_fails": case(lambda ph: tf.assert_type(ph("x"), tf.int32)),
        "assert_type_fails_message": case(lambda ph: tf.assert_type(ph("x"), tf.int32, message="m")),
        "assert_type_passes": case(lambda ph: with_dep(tf.assert_type(ph("x", tf.int32), tf.int32), 1.0)),
        "assert_integer_fails": case(lambda ph: tf.assert_integer(ph("x"))),
        "assert_integer_fails_message": case(lambda ph: tf.assert_integer(ph("x"), message="m")),
        "assert_integer_passes": case(lambda ph: with_dep(tf.assert_integer(ph("x", tf.int64)), 1.0)),
        "assert_scalar_fails": case(lambda ph: tf.assert_scalar(ph("x", shape=[2]))),
        "assert_scalar_fails_message": case(lambda ph: tf.assert_scalar(ph("x", shape=[2]), message="m")),
        "assert_scalar_returns_tensor": case(lambda ph: tf.assert_scalar(ph("x", shape=[])) * 2.0, {"x": 3.0}),
        "assert_proper_iterable_tensor": case(lambda ph: tf.assert_proper_iterable(ph("x"))),
        "assert_proper_iterable_string": case(lambda ph: tf.assert_proper_iterable("abc")),
        "assert_proper_iterable_number": case(lambda ph: tf.assert_proper_iterable(3)),
        "assert_proper_iterable_list": case(lambda ph: tf.assert_proper_iterable([1, 2]) or tf.constant(1.0)),
        "assert_same_float_dtype": case(lambda ph: tf.constant(
            1.0, tf.debugging.assert_same_float_dtype([ph("x", tf.float64), ph("y", tf.float64)]))),
        "assert_same_float_dtype_mixed": case(lambda ph: tf.debugging.assert_same_float_dtype(
            [ph("x", tf.float32), ph("y", tf.float64)])),
        "assert_same_float_dtype_int": case(lambda ph: tf.debugging.assert_same_float_dtype([ph("x", tf.int32)])),
        "is_numeric_tensor": case(lambda ph: tf.constant(
            [tf.is_numeric_tensor(ph("x")), tf.is_numeric_tensor(ph("s", tf.string))])),
        "is_non_decreasing": case(lambda ph: [tf.is_non_decreasing(ph("x")), tf.is_non_decreasing(ph("y"))][0],
                                  {"x": [1.0, 1.0, 2.0], "y": [1.0]}),
        "is_non_decreasing_false": case(lambda ph: tf.is_non_decreasing(ph("x")), {"x": [2.0, 1.0]}),
        "is_strictly_increasing": case(lambda ph: tf.is_strictly_increasing(ph("x")), {"x": [1.0, 1.0, 2.0]}),
        "is_strictly_increasing_true": case(lambda ph: tf.is_strictly_increasing(ph("x")), {"x": [[1.0, 2.0]]}),
    }


def near_cases():
    return {
        "assert_near_passes": case(lambda ph: with_dep(tf.assert_near(ph("x"), ph("y")), 1.0),
                                   {"x": [1.0, 2.0], "y": [1.0, 2.0 + 1e-7]}),
        "assert_near_fails": case(lambda ph: tf.assert_near(ph("x"), ph("y")), {"x": [1.0, 2.0], "y": [1.0, 2.1]}),
        "assert_near_tolerances": case(lambda ph: tf.assert_near(ph("x"), ph("y"), rtol=0.01, atol=0.001,
                                                                 message="m"), {"x": [1.0, 2.0], "y": [1.0, 2.1]}),
        "assert_near_float64": case(lambda ph: tf.assert_near(ph("x", tf.float64), ph("y", tf.float64)),
                                    {"x": [1.0], "y": [1.1]}),
    }


def numerics_cases():
    def grad_of_checked(ph):
        x = ph("x")
        return tf.gradients(tf.reduce_sum(tf.check_numerics(x, "in x") * ph("w")), x)[0]

    def nan_gradient(ph):
        x = ph("x")
        return tf.gradients(tf.reduce_sum(tf.sqrt(tf.check_numerics(x, "in x"))), x)[0]

    def added_checks(ph):
        x = ph("x")
        y = tf.log(x, name="y")
        tf.multiply(y, 2.0, name="z")
        check = tf.add_check_numerics_ops()
        checks = [op for op in tf.get_default_graph().get_operations() if op.type == "CheckNumerics"]
        return tf.constant([len(checks), len(check.control_inputs)] + [len(c.control_inputs) for c in checks])

    def added_checks_run(ph):
        y = tf.log(ph("x"), name="y")
        z = tf.multiply(y, 2.0, name="z")
        with tf.control_dependencies([tf.add_check_numerics_ops()]):
            return tf.identity(z)

    def added_checks_in_cond(ph):
        x = ph("x", shape=[])
        tf.cond(x > 0, lambda: x * 2.0, lambda: x)
        return tf.add_check_numerics_ops()

    return {
        "check_numerics_passes": case(lambda ph: tf.check_numerics(ph("x"), "m") * 2.0, {"x": [1.0, -2.0]}),
        "check_numerics_nan": case(lambda ph: tf.check_numerics(ph("x"), "bad x"), {"x": [1.0, NAN]}),
        "check_numerics_inf": case(lambda ph: tf.check_numerics(ph("x"), "bad x"), {"x": [1.0, -INF]}),
        "check_numerics_inf_and_nan": case(lambda ph: tf.check_numerics(ph("x"), "bad x"), {"x": [INF, NAN]}),
        "check_numerics_float64": case(lambda ph: tf.check_numerics(ph("x", tf.float64), "m"), {"x": [NAN]}),
        "check_numerics_float16": case(lambda ph: tf.check_numerics(ph("x", tf.float16), "m"), {"x": [INF]}),
        "check_numerics_int": case(lambda ph: tf.check_numerics(ph("x", tf.int32), "m")),
        "check_numerics_gradient": case(grad_of_checked, {"x": [1.0, 2.0], "w": [3.0, 4.0]}),
        "check_numerics_nan_gradient": case(nan_gradient, {"x": [0.0, 4.0]}),
        "debugging_check_numerics": case(lambda ph: tf.debugging.check_numerics(ph("x"), "dbg"), {"x": [NAN]}),
        "verify_tensor_all_finite_passes": case(lambda ph: tf.verify_tensor_all_finite(ph("x"), "v") + 1.0,
                                                {"x": [1.0]}),
        "verify_tensor_all_finite_fails": case(lambda ph: tf.verify_tensor_all_finite(ph("x"), "not finite"),
                                               {"x": [INF]}),
        "verify_tensor_all_finite_keywords": case(
            lambda ph: tf.verify_tensor_all_finite(x=ph("x"), message="kw"), {"x": [NAN]}),
        "assert_all_finite": case(lambda ph: tf.debugging.assert_all_finite(ph("x"), "af"), {"x": [NAN]}),
        "add_check_numerics_ops_structure": case(added_checks),
        "add_check_numerics_ops_fails": case(added_checks_run, {"x": [1.0, -1.0]}),
        "add_check_numerics_ops_passes": case(added_checks_run, {"x": [1.0, 2.0]}),
        "add_check_numerics_ops_in_cond": case(added_checks_in_cond),
    }



CASES = {}
for _group in (binary_cases, unary_cases, rank_cases, static_cases, near_cases, numerics_cases):
    CASES.update(_group())


def run(build, feed):
    """The recorded form of one case: the fetched value, or the error's class, message and when it was raised."""
    phs = {}

    def ph(name, dtype=tf.float32, shape=None):
        phs[name] = tf.placeholder(dtype, shape, name=name)
        return phs[name]

    try:
        fetch = build(ph)
    except Exception as e:  # noqa: BLE001 - the error is what the case records
        return {"error": type(e).__name__, "message": getattr(e, "message", str(e)), "when": "build"}
    with tf.Session() as s:
        try:
            value = s.run(fetch, {phs[k]: v for k, v in (feed or {}).items()})
        except tf.errors.OpError as e:
            return {"error": type(e).__name__, "message": e.message.split("\n  in op ")[0], "when": "run"}
    return {"value": None if value is None or isinstance(value, list) else value}


def _tolerances(text):  # TF1 prints the tolerance tensors' reprs; here their values
    return re.sub(r"rtol = .*?, atol = .*?\]", "rtol = R, atol = A]", text)


_DIFFERENCES = {
    # TF1 drops the separator between its two strings ('...element-wise:' 'x (x:0) = ')
    "assert_non_positive": lambda text: text.replace("element-wise:x (", "element-wise:] [x ("
                                                     if text.startswith("assertion failed") else "element-wise:\nx ("),
    "assert_near": _tolerances,
    # TF1 formats the bytes attr in Python 3 as b'...'
    "check_numerics_nan_gradient": lambda text: text.replace("b'in x'", "in x"),
}
_CLASS_ONLY = {
    "check_numerics_int": "int32",  # TF1's op-library wording; the class and the dtype are the same
    "assert_proper_iterable_tensor": 'Expected argument "values" to be a "proper" iterable.  Found: ',
}


@pytest.mark.parametrize("name", sorted(TF1))
def test_as_tf1(name):
    want, got = TF1[name], run(*CASES[name])
    if "value" in want:
        assert "error" not in got, got
        if want["value"] is None:
            assert got["value"] is None
        else:
            np.testing.assert_allclose(got["value"], array(want["value"]), rtol=1e-6)
        return
    assert (got.get("error"), got.get("when")) == (want["error"], want["when"]), got
    if name in _CLASS_ONLY:
        assert _CLASS_ONLY[name] in got["message"]
        return
    expected = want["message"]
    for prefix, normalize in _DIFFERENCES.items():
        if name.startswith(prefix):
            expected, got["message"] = normalize(expected), normalize(got["message"])
    assert got["message"] == expected


def test_check_numerics_is_not_folded_or_merged():
    """Stateful, as in TF1: a check of a constant runs every step, and two equal checks stay two."""
    bad = tf.constant([1.0, np.nan])
    checked = tf.check_numerics(bad, "c")
    twice = tf.check_numerics(bad, "c")
    with tf.Session() as s:
        for fetch in (checked, twice):
            with pytest.raises(tf.errors.InvalidArgumentError, match="c : Tensor had NaN values"):
                s.run(fetch)


def test_static_comparison_raises_while_building_with_a_user_message():
    with pytest.raises(tf.errors.InvalidArgumentError, match="^batch sizes differ\nCondition x == y"):
        tf.assert_equal(tf.constant(2), 3, message="batch sizes differ")


def test_python_number_compares_in_the_tensors_dtype():
    x = tf.placeholder(tf.float32, [None], name="x")
    check = tf.assert_less(x, 1)
    with tf.Session() as s:
        s.run(check, {x: [0.5]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[x \(x:0\) = \] \[1.5\]"):
            s.run(check, {x: [1.5]})


def test_checks_inside_a_while_loop_body():
    def body(i, acc):
        with tf.control_dependencies([tf.assert_less(i, 3, message="too many steps")]):
            return i + 1, tf.check_numerics(acc * 2.0, "acc")
    _, acc = tf.while_loop(lambda i, acc: i < 5, body, [tf.constant(0), tf.constant(1.0)])
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="too many steps"):
            s.run(acc)


def test_namespaces():
    for name in ["assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
                 "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
                 "assert_non_positive", "assert_near", "assert_rank", "assert_rank_at_least", "assert_rank_in",
                 "assert_type", "assert_integer", "assert_scalar", "assert_proper_iterable", "check_numerics",
                 "is_finite", "is_inf", "is_nan", "is_numeric_tensor", "is_non_decreasing", "is_strictly_increasing",
                 "assert_same_float_dtype", "assert_all_finite", "Assert"]:
        assert callable(getattr(tf.debugging, name)), name
        if name not in ("assert_all_finite", "Assert"):
            assert getattr(tf, name) is getattr(tf.debugging, name), name
    assert tf.add_check_numerics_ops and tf.verify_tensor_all_finite and tf.compat.v1.debugging is tf.debugging
