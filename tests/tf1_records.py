"""Running the cases of ``tests/fixtures/tf1/records.json`` and ``parsing.json`` (made by ``make_records.py`` and
``make_parsing.py`` with real TensorFlow) here, and comparing outcomes: the same values, dtypes and static shapes, or the same error class at the same
phase (building or running) with TF's message in ours."""

import numpy as np
from tf1_fixtures import FOLDER, array, load

import tensorweave as tf

TF1 = {**load("records"), **load("parsing")}
FILES = FOLDER / "records"


def as_bytes(value):
    """A recorded string (bytes kept as latin-1 text) back as bytes, through lists."""
    if isinstance(value, list):
        return [as_bytes(v) for v in value]
    return value.encode("latin-1") if isinstance(value, str) else value


def features(specs):
    """Feature specs from the fixture's form (see make_records.spec_features)."""
    if specs is None:
        return None
    out = {}
    for key, s in specs.items():
        if s[0] == "fixed":
            out[key] = tf.FixedLenFeature(s[1], s[2] and tf.as_dtype(s[2]), as_bytes(s[3]))
        elif s[0] == "varlen":
            out[key] = tf.VarLenFeature(tf.as_dtype(s[1]))
        else:
            out[key] = tf.FixedLenSequenceFeature(s[1], tf.as_dtype(s[2]), s[3], as_bytes(s[4]))
    return out


def _walk(fn, x):
    if isinstance(x, dict):
        return {k: _walk(fn, v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and not isinstance(x, tf.SparseTensorValue):
        return [_walk(fn, v) for v in x]
    return fn(x)


def _static(t):
    if isinstance(t, tf.SparseTensor):
        return {"indices": t.indices.shape.as_list(), "values": t.values.shape.as_list(),
                "dense_shape": t.dense_shape.shape.as_list()}
    return t.shape.as_list() if t.shape.ndims is not None else None


def outcome(build):
    """Builds in a fresh graph and runs: {"result": fetched values, "shapes"} or {"error", "message", "at"}."""
    with tf.Graph().as_default():
        try:
            out = build()
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            return {"error": type(e).__name__, "message": str(e), "at": "build"}
        shapes = _walk(_static, out)
        with tf.Session() as sess:
            try:
                return {"result": sess.run(out), "shapes": shapes}
            except tf.errors.OpError as e:
                return {"error": type(e).__name__, "message": str(e), "at": "run", "shapes": shapes}


def core_message(message):
    """TF's message without the parts naming TF's own graph nodes or C++ calls, or listing its dtypes (TF's
    lists have bfloat16, which Tensorweave lacks)."""
    for cut in (" for '{{node", "' failed with", " (Is this even", ": float16, float32"):
        message = message.split(cut)[0]
    return message


def assert_error(got, want, case):
    assert "error" in got, f"{case}: TF raised {want['error']}: {want['message']}; we returned {got}"
    assert (got["error"], got["at"]) == (want["error"], want["at"]), (case, got, want)
    assert core_message(want["message"]) in got["message"], (case, got["message"], want["message"])


def assert_value(got, want, case):
    """``got`` (a numpy value or SparseTensorValue) against a recorded {"value", "dtype"} or sparse triple."""
    if "indices" in want:
        assert isinstance(got, tf.SparseTensorValue), (case, got)
        np.testing.assert_array_equal(got.indices, np.asarray(want["indices"], np.int64).reshape(-1, got.indices.shape[1]))
        np.testing.assert_array_equal(got.dense_shape, want["dense_shape"])
        assert got.indices.dtype == np.int64 and got.dense_shape.dtype == np.int64, case
        want_values = as_bytes(want["values"]) if want["dtype"] == "object" else want["values"]
        assert str(got.values.dtype) == want["dtype"], (case, got.values.dtype, want["dtype"])
        np.testing.assert_array_equal(got.values, np.asarray(want_values, dtype=got.values.dtype))
        return
    got = np.asarray(got)
    if want["dtype"] == "string":
        assert got.dtype == object, (case, got.dtype)
        np.testing.assert_array_equal(got, np.asarray(as_bytes(want["value"]), dtype=object).reshape(got.shape))
        return
    assert got.dtype.name == want["dtype"], (case, got.dtype, want["dtype"])
    expected = array(want["value"])
    if got.dtype.kind == "c":
        expected = expected[..., 0] + 1j * expected[..., 1]
    np.testing.assert_array_equal(got, expected.astype(got.dtype).reshape(got.shape))


def assert_outcome(got, case):
    """``got`` (from ``outcome``) matches what TF did for ``case``."""
    want = TF1[case]
    if "error" in want:
        assert_error(got, want, case)
    else:
        assert "error" not in got, f"{case}: TF returned a value, we raised {got.get('error')}: {got.get('message')}"
        _compare(got["result"], want["result"], case)
    assert got.get("shapes") == want.get("shapes"), (case, got.get("shapes"), want.get("shapes"))


def _compare(got, want, case):
    if isinstance(want, dict) and ("dtype" in want or "indices" in want):
        assert_value(got, want, case)
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want), (case, sorted(got), sorted(want))
        for key in want:
            _compare(got[key], want[key], f"{case}[{key}]")
    else:
        assert len(got) == len(want), (case, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{case}[{i}]")
