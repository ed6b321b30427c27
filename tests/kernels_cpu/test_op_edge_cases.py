"""Single ops at their edges against TF1 (tests/fixtures/tf1/make_op_edge_cases.py): argmax/argmin skip NaNs,
integer means are exact where TF's are, top_k is a TopKV2 namedtuple, cumprod's gradient at zeros, clip_by_value's gradient at NaNs and bounds, and the
axis/dim arguments of softmax and the softmax cross-entropies."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

CASES = load("op_edge_cases")


def build(case):
    """The fetches of one case, built as the fixture script built them in TF."""
    kind = case["kind"]
    if kind == "arg":
        x = tf.constant(array(case["x"], case["dtype"]))
        return {"out": getattr(tf, case["fn"])(x, case["axis"])}
    if kind == "int_reduce":
        x = tf.constant(array(case["x"], case["dtype"]))
        return {"mean": tf.reduce_mean(x, case["axis"]), "sum": tf.reduce_sum(x, case["axis"])}
    if kind == "top_k":
        result = tf.nn.top_k(tf.constant(array(case["x"], np.float32)), case["k"])
        return {"values": result.values, "indices": result.indices}
    if kind == "cumprod":
        x = tf.constant(array(case["x"], np.float64))
        y = tf.cumprod(x, case["axis"], exclusive=case["exclusive"], reverse=case["reverse"])
        return {"out": y, "grad": tf.gradients(y, x, grad_ys=tf.constant(array(case["grad_ys"])))[0]}
    if kind == "clip":
        t, low, high = (tf.constant(array(case[k], np.float64)) for k in ("t", "min", "max"))
        y = tf.clip_by_value(t, low, high)
        grads = tf.gradients(y, [t, low, high], grad_ys=tf.constant(array(case["grad_ys"])))
        return {"out": y, "grad_t": grads[0], "grad_min": grads[1], "grad_max": grads[2]}
    if kind == "xent":
        labels, logits = (tf.constant(array(case[k], np.float64)) for k in ("labels", "logits"))
        y = getattr(tf.nn, case["fn"])(labels=labels, logits=logits, **case["kwargs"])
        return {"out": y, "grad_logits": tf.gradients(y, logits)[0]}
    if kind == "softmax":
        return {"out": getattr(tf.nn, case["fn"])(tf.constant(array(case["logits"], np.float64)), **case["kwargs"])}
    raise ValueError(kind)


def expected(name):
    """TF's record of the case. TF's v1 softmax_cross_entropy_with_logits refuses axis= alone (its dim=-1
    default counts as given); here it is accepted and must agree with the v2 function's numbers."""
    case = CASES[name]
    if case.get("fn") == "softmax_cross_entropy_with_logits" and "axis" in case["kwargs"] \
            and "dim" not in case["kwargs"]:
        return CASES[name.replace("softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2")]
    return case


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_tf1(name):
    case, want = CASES[name], expected(name)
    if "error" in want:
        with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
            build(case)
        return
    fetches = build(case)
    with tf.Session() as sess:
        got = sess.run(fetches)
    for key, value in got.items():
        value = np.asarray(value)
        want_value = array(want[key]).reshape(want[f"{key}_shape"])
        assert value.shape == want_value.shape, key
        if case["kind"] == "int_reduce":
            assert value.dtype == np.dtype(case["dtype"]) and value.tolist() == want_value.tolist(), key
            continue
        np.testing.assert_allclose(value, want_value, rtol=1e-6 if case.get("dtype") != "float16" else 1e-3,
                                   atol=1e-12, err_msg=key)


def test_top_k_is_a_namedtuple_as_in_tf():
    result = tf.nn.top_k(tf.constant([[1.0, 3.0, 2.0]]), k=2)
    assert type(result).__name__ == "TopKV2" and result._fields == ("values", "indices")
    values, indices = result
    assert values is result.values and indices is result.indices
    with tf.Session() as sess:
        fetched = sess.run(result)
    assert type(fetched).__name__ == "TopKV2"
    assert fetched.values.tolist() == [[3.0, 2.0]] and fetched.indices.tolist() == [[1, 2]]
    assert tf.math.top_k is tf.nn.top_k
