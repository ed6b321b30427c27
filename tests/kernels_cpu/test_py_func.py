"""Python in the graph: ``tf.py_func`` / ``tf.numpy_function`` (values, strings, errors with TF1's classes and
messages, GraphDefs that hold a py_func), gradients given by ``gradient_override_map`` for a py_func and for a
builtin op, and ``tf.custom_gradient`` with and without resource variables; reference values from
tests/fixtures/tf1/make_py_func.py."""

import re
import subprocess
import sys

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

CASES = load("py_func")
FEED = [1.0, 2.0, 3.0]


def _error_line(exc):
    """The message's line naming the problem, with the token written <token> (as the fixture records it)."""
    line = next(l for l in exc.message.splitlines()
                if re.match(r"^\w+(Error|Iteration): ", l) or "pyfunc_" in l)
    return re.sub(r"pyfunc_\d+", "<token>", line)


@pytest.mark.parametrize("name", ["ValueError", "TypeError", "StopIteration", "NotImplementedError", "MemoryError",
                                  "RuntimeError", "KeyError", "IndexError", "ZeroDivisionError"])
def test_an_exception_in_the_function_reaches_run_as_tf1s_error_naming_the_op(name):
    expected = CASES[f"error/{name}"]
    exc_type = __builtins__[name] if isinstance(__builtins__, dict) else getattr(__builtins__, name)

    def fn(v):
        raise exc_type("boom %d" % len(v))

    x = tf.placeholder(tf.float32, [3])
    y = tf.py_func(fn, [x], tf.float32, name="raises")
    with tf.Session() as s, pytest.raises(tf.errors.OpError) as info:
        s.run(y, {x: FEED})
    assert type(info.value).__name__ == expected["class"]
    assert _error_line(info.value) == expected["line"]
    assert "'raises'" in info.value.message and "test_py_func.py" in info.value.message  # the op, the user's line


@pytest.mark.parametrize("case, fn", [("wrong_dtype", lambda v: v.astype(np.float64)),
                                      ("wrong_count", lambda v: (v, v)),
                                      ("python_float_for_float32", lambda v: 1.5)])
def test_results_that_do_not_match_tout_are_refused_as_tf1(case, fn):
    expected = CASES[f"error/{case}"]
    x = tf.placeholder(tf.float32, [3])
    y = tf.py_func(fn, [x], tf.float32)
    with tf.Session() as s, pytest.raises(tf.errors.OpError) as info:
        s.run(y, {x: FEED})
    assert type(info.value).__name__ == expected["class"] and _error_line(info.value) == expected["line"]


def test_values_lists_scalars_and_strings_as_tf1():
    x = tf.placeholder(tf.float32, [3])
    words = tf.constant(["ab", "c d", ""])
    two = tf.py_func(lambda v: [v * 2, np.int64(len(v))], [x], [tf.float32, tf.int64])
    one = tf.py_func(lambda v: v + 1, [x], [tf.float32])
    scalar_in = tf.py_func(lambda v, k: v * k, [x, 3.0], tf.float32)
    seen = []
    upper = tf.py_func(lambda v: seen.append(v) or np.array([w.upper() + b"!" for w in v], dtype=object),
                       [words], tf.string)
    text = tf.py_func(lambda v: "caf\u00e9", [words], tf.string)
    int64 = tf.py_func(lambda v: 7, [x], tf.int64)
    assert isinstance(two, list) is CASES["two_outputs"]["is_list"] and isinstance(one, list)
    assert scalar_in.shape.ndims is None and CASES["shape_unknown"]["ndims"] is None
    with tf.Session() as s:
        a, b = s.run(two, {x: FEED})
        np.testing.assert_array_equal(a, array(CASES["two_outputs"]["values"][0]))
        assert b == CASES["two_outputs"]["values"][1] and a.dtype == np.float32
        np.testing.assert_array_equal(s.run(one, {x: FEED})[0], array(CASES["list_of_one"]["value"]))
        np.testing.assert_array_equal(s.run(scalar_in, {x: FEED}), array(CASES["python_scalar_input"]["value"]))
        assert list(s.run(upper)) == [w.encode("latin-1") for w in CASES["strings_as_bytes"]["value"]]
        assert seen[0].dtype == object and list(seen[0]) == [b"ab", b"c d", b""]
        assert s.run(text) == CASES["str_result"]["value"].encode("latin-1")
        assert s.run(int64, {x: FEED}) == CASES["python_int_for_int64"]["value"]


def test_scalars_reach_the_function_as_numpy_scalars_and_bytes():
    seen = []
    y = tf.py_func(lambda b, f: seen.append([type(b).__name__, type(f).__name__]) or np.int64(0),
                   [tf.constant("ab"), tf.constant(1.5)], tf.int64)
    with tf.Session() as s:
        s.run(y)
    assert seen == [CASES["scalar_inputs"]["types"]]


def test_numpy_function_op_types_attrs_and_no_gradient():
    x = tf.placeholder(tf.float32, [3])
    y = tf.numpy_function(lambda v: v * 3, [x], tf.float32)
    assert y.op.type == CASES["numpy_function"]["type"]
    assert tf.py_func(lambda v: v, [x], tf.float32).op.type == CASES["op_types"]["stateful"]
    assert tf.py_func(lambda v: v, [x], tf.float32, stateful=False).op.type == CASES["op_types"]["stateless"]
    assert sorted(y.op.node_def.attr) == CASES["node_attrs"]["attrs"]
    assert y.op.get_attr("token").startswith(CASES["node_attrs"]["token_prefix"])
    assert [g is None for g in tf.gradients(y, x)] == CASES["no_gradient"]["grads"]
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(y, {x: FEED}), array(CASES["numpy_function"]["value"]))


def test_no_outputs_returns_the_op_which_runs_for_its_side_effect():
    calls = []
    x = tf.constant([1.0, 2.0])
    op = tf.py_func(lambda v: calls.append(v.sum()), [x], [])
    assert isinstance(op, tf.Operation)
    with tf.control_dependencies([op]):
        y = tf.identity(x)
    with tf.Session() as s:
        s.run(y)
        s.run(y)
    assert calls == [3.0, 3.0]  # stateful: run each time, never folded


def test_py_func_in_cond_and_while_loop_with_captured_tensors():
    x = tf.placeholder(tf.float32, [])
    branch = tf.cond(x > 0, lambda: tf.py_func(lambda v: v * 10, [x], tf.float32),
                     lambda: tf.py_func(lambda v: v - 10, [x], tf.float32))
    _, total = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + tf.reshape(
        tf.py_func(lambda k, v: np.float32(k * v), [i, x], tf.float32), [])), [0, 0.0])
    with tf.Session() as s:
        assert s.run(branch, {x: 2.0}) == 20.0 and s.run(branch, {x: -1.0}) == -11.0
        assert s.run(total, {x: 2.0}) == 6.0  # 2 * (0 + 1 + 2)


def _export():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        tf.py_func(lambda v: v * 10, [x], tf.float32, name="out")
    return g, g.as_graph_def()


def test_a_graph_def_with_a_py_func_runs_again_in_this_process():
    g, graph_def = _export()
    with tf.Graph().as_default(), tf.Session() as s:
        tf.import_graph_def(graph_def, name="")
        np.testing.assert_array_equal(s.run("out:0", {"x:0": [1.0, 2.0]}),
                                      array(CASES["reimport_same_process"]["value"]))


OTHER_PROCESS = """
import sys
import tensorweave as tf
graph_def = tf.GraphDef()
graph_def.ParseFromString(open(sys.argv[1], 'rb').read())
tf.import_graph_def(graph_def, name='')
with tf.Session() as s:
    try:
        s.run('out:0', {'x:0': [1.0, 2.0]})
    except tf.errors.OpError as e:
        print(type(e).__name__)
        print([l for l in e.message.splitlines() if 'pyfunc_' in l][0])
"""


def test_a_graph_def_with_a_py_func_fails_in_another_process_with_tf1s_message(tmp_path):
    _, graph_def = _export()
    path = tmp_path / "graph.pb"
    path.write_bytes(graph_def.SerializeToString())
    out = subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(path)], capture_output=True, text=True,
                         timeout=120)
    cls, line = out.stdout.strip().splitlines()[-2:]
    expected = CASES["error/other_process"]
    assert cls == expected["class"] and re.sub(r"pyfunc_\d+", "<token>", line) == expected["line"]


def test_gradient_override_map_for_a_py_func_and_for_square():
    g = tf.Graph()
    with g.as_default(), tf.Session() as s:
        x = tf.constant([1.0, -2.0, 3.0])

        @tf.RegisterGradient("PyFuncTimesTwoGrad_tw")
        def _py_grad(op, dy):
            return [dy * 2.0]

        @tf.RegisterGradient("SquareAsCube_tw")
        def _square_grad(op, dy):
            return [dy * 3.0 * op.inputs[0] * op.inputs[0]]

        with g.gradient_override_map({"PyFunc": "PyFuncTimesTwoGrad_tw", "Square": "SquareAsCube_tw"}):
            y = tf.py_func(lambda v: v * 2, [x], tf.float32)
            z = tf.square(x)
        plain = tf.square(x)  # outside the map: the op's own gradient
        y.set_shape(x.shape)
        expected = CASES["override/py_func"]
        np.testing.assert_array_equal(s.run(y), array(expected["y"]))
        np.testing.assert_array_equal(s.run(tf.gradients(tf.reduce_sum(y * y), x)[0]), array(expected["grad"]))
        np.testing.assert_array_equal(s.run(tf.gradients(z, x)[0]), array(CASES["override/square"]["grad"]))
        np.testing.assert_array_equal(s.run(tf.gradients(plain, x)[0]), [2.0, -4.0, 6.0])


def test_custom_gradient_replaces_the_functions_gradient():
    @tf.custom_gradient
    def log1pexp(v):
        e = tf.exp(v)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.log(1 + e), grad

    expected = CASES["custom/log1pexp"]
    x = tf.constant(array(expected["x"], np.float32))
    y = log1pexp(x)
    assert y.op.type == expected["op_type"]
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(y), array(expected["y"]), rtol=1e-6)
        np.testing.assert_allclose(s.run(tf.gradients(y, x)[0]), array(expected["grad"]), rtol=1e-6)


def test_custom_gradient_with_two_inputs_and_two_outputs():
    @tf.custom_gradient
    def two_in_two_out(a, b):
        def grad(da, db):
            return da * 2.0 + db, da * 3.0 - db
        return (a * b, a + b), grad

    expected = CASES["custom/two_in_two_out"]
    a, b = tf.constant(array(expected["a"], np.float32)), tf.constant(array(expected["b"], np.float32))
    p, q = two_in_two_out(a, b)
    ga, gb = tf.gradients(p * 5.0 + q * q, [a, b])
    with tf.Session() as s:
        for t, key in [(p, "p"), (q, "q"), (ga, "ga"), (gb, "gb")]:
            np.testing.assert_array_equal(s.run(t), array(expected[key]), err_msg=key)


def test_custom_gradient_gives_the_variables_it_read_their_gradients():
    expected = CASES["custom/variables"]
    w_init = array(expected["w"], np.float32)
    with tf.variable_scope("res", use_resource=True):
        @tf.custom_gradient
        def scaled(v):
            w = tf.get_variable("w", initializer=w_init)

            def grad(dy, variables=None):
                assert [x.name for x in variables] == ["res/w:0"]
                return dy * 10.0, [dy * v * 100.0]
            return v * w, grad
        x = tf.constant(array(expected["x"], np.float32))
        y = scaled(x)
    w = next(v for v in tf.global_variables() if v.name == "res/w:0")
    gx, gw = tf.gradients(tf.reduce_sum(y), [x, w])
    train = tf.train.GradientDescentOptimizer(0.01).minimize(tf.reduce_sum(y), var_list=[w])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(s.run(y), array(expected["y"]))
        np.testing.assert_array_equal(s.run(gx), array(expected["gx"]))
        np.testing.assert_array_equal(s.run(gw), array(expected["gw"]))
        s.run(train)
        np.testing.assert_allclose(s.run(w), w_init - 0.01 * array(expected["gw"]), rtol=1e-6)


def test_custom_gradient_refuses_a_grad_fn_without_variables_when_the_function_reads_one():
    expected = CASES["custom/variables_without_keyword"]
    with tf.variable_scope("res2", use_resource=True):
        @tf.custom_gradient
        def no_keyword(v):
            w = tf.get_variable("w", initializer=np.array([0.5, -1.5], np.float32))
            return v * w, lambda dy: dy
        with pytest.raises(TypeError) as info:
            no_keyword(tf.constant([1.0, 2.0]))
    assert type(info.value).__name__ == expected["class"] and str(info.value) == expected["message"]


def test_custom_gradient_inside_a_while_loop():
    @tf.custom_gradient
    def clipped_identity(v):
        return tf.identity(v), lambda dy: tf.clip_by_value(dy, -0.5, 0.5)

    x = tf.constant(2.0)
    _, y = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, clipped_identity(t * x)), [0, 1.0])
    with tf.Session() as s:
        assert s.run(y) == 8.0
        # t_k = clip_grad(t_{k-1} * x): each step's incoming gradient (1 at every step here) is clipped to 0.5,
        # so dy/dx = 0.5 * t2 + 0.5 * t1 + 0.5 * t0 = 0.5 * (4 + 2 + 1)
        assert s.run(tf.gradients(y, x)[0]) == pytest.approx(3.5)


def test_register_gradient_refuses_a_builtin_op_types_name_as_tf1():
    with pytest.raises(KeyError, match="'Square' is already registered.*gradient_override_map"):
        tf.RegisterGradient("Square")(lambda op, grad: grad)


def test_the_py_func_with_gradient_recipe_tf1_users_copy():
    """A gradient registered under a fresh name, selected for PyFunc, itself computed by a py_func."""
    def py_func_with_grad(func, inp, Tout, grad, name):  # noqa: N803 - as the recipe writes it
        tf.RegisterGradient(name)(grad)
        with tf.get_default_graph().gradient_override_map({"PyFunc": name}):
            return tf.py_func(func, inp, Tout, stateful=True)

    def sin_grad(op, dy):
        return dy * tf.py_func(lambda v: np.cos(v).astype(np.float32), [op.inputs[0]], tf.float32)

    x = tf.constant([0.0, 1.0, 2.0])
    y = py_func_with_grad(lambda v: np.sin(v).astype(np.float32), [x], tf.float32, sin_grad, "SinViaPython_tw")
    (dx,) = tf.gradients(y, x)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(y), np.sin([0.0, 1.0, 2.0]), rtol=1e-6)
        np.testing.assert_allclose(s.run(dx), np.cos([0.0, 1.0, 2.0]), rtol=1e-6)


def test_py_func_in_a_dataset_map_as_tf1_input_pipelines_use_it():
    words = tf.data.Dataset.from_tensor_slices(["a", "bb", "ccc"])
    lengths = words.map(lambda w: tf.py_func(lambda b: np.int64(len(b)), [w], tf.int64))
    nxt = lengths.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert [s.run(nxt) for _ in range(3)] == [1, 2, 3]
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nxt)


def test_custom_gradient_in_a_cond_with_a_variable_created_outside():
    with tf.variable_scope("outer", use_resource=True):
        w = tf.get_variable("w", initializer=2.0)

    @tf.custom_gradient
    def times_w(v):
        def grad(dy, variables):
            assert variables == [w]
            return dy * 3.0, [dy * 7.0]
        return v * w, grad

    x = tf.placeholder(tf.float32, [])
    z = tf.cond(x > 0, lambda: times_w(x), lambda: x)
    gx, gw = tf.gradients(z, [x, w])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run([z, gx, gw], {x: 3.0}) == [6.0, 3.0, 7.0]
        assert s.run([z, gx, gw], {x: -3.0}) == [-3.0, 1.0, 0.0]  # untaken: the variable's gradient is zero
