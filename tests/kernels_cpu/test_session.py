"""Session.run: fetch structures, feeds, partial execution, plan caching, errors, defaults."""

import collections
import inspect
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.runtime import plan as plan_mod


def test_nested_fetch_structures(sess):
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    Pair = collections.namedtuple("Pair", "x y")
    out = sess.run({"a": a, "list": [a, (b, a)], "pair": Pair(a, b), "op": b.op})
    assert out["a"] == 1.0 and out["list"][1] == (2.0, 1.0)
    assert out["pair"] == Pair(1.0, 2.0) and out["op"] is None
    assert sess.run("Const_1:0") == 2.0


def test_feeding_an_intermediate_replaces_its_producer():
    x = tf.placeholder(tf.float32, [2])
    y = tf.add(x, 1.0)
    z = tf.add(y, y)
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(z, {y: [1.0, 2.0]}), [2.0, 4.0])  # x need not be fed
        np.testing.assert_array_equal(s.run(z, {x: [0.0, 1.0]}), [2.0, 4.0])


def test_partial_execution_runs_only_what_the_fetch_needs(monkeypatch):
    x = tf.placeholder(tf.float32, [2])
    unused = None
    ok = tf.add(tf.constant([1.0, 2.0]), 1.0)
    bad = tf.add(x, 1.0)  # needs x, which is not fed
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(ok), [2.0, 3.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value for placeholder"):
            s.run(bad)
    assert unused is None


def test_plans_are_compiled_once_per_signature(monkeypatch):
    calls = []
    real = plan_mod.compile_plan
    monkeypatch.setattr("tensorweave.runtime.session.compile_plan",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    x = tf.placeholder(tf.float32, [])
    y = tf.add(x, 1.0)
    with tf.Session() as s:
        for i in range(20):
            assert s.run(y, {x: float(i)}) == i + 1
        s.run([y], {x: 1.0})  # the same signature
        s.run([y, x], {x: 1.0})
    assert len(calls) == 2


def test_feed_errors_name_tensor_expected_and_got():
    x = tf.placeholder(tf.int32, [None, 3], name="ids")
    y = tf.add(x, 1)
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \(2, 4\) for tensor 'ids:0'.*\[\?, 3\]"):
            s.run(y, {x: np.zeros((2, 4), np.int32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="dtype float64 to tensor 'ids:0' of dtype int32"):
            s.run(y, {x: np.zeros((2, 3))})
        with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
            s.run(y, {x: y})
        np.testing.assert_array_equal(s.run(y, {"ids:0": [[1, 2, 3]]}), [[2, 3, 4]])


def test_kernel_failure_names_op_type_device_and_user_line():
    a = tf.placeholder(tf.float32, [None, None])
    b = tf.placeholder(tf.float32, [None, None])
    line = inspect.currentframe().f_lineno + 1
    c = tf.matmul(a, b, name="bad_matmul")  # shapes only known when run
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(c, {a: np.ones((2, 3)), b: np.ones((4, 5))})
    msg = str(info.value)
    assert "'bad_matmul' (MatMul)" in msg and re.search(r"device:(CPU|GPU):0", msg)  # where the placer put it
    assert f"test_session.py:{line}" in msg
    assert info.value.op is c.op


def test_unfed_placeholder_error_names_it_and_its_line():
    x = tf.placeholder(tf.float32, [2], name="features")
    line = inspect.currentframe().f_lineno - 1
    y = tf.add(tf.constant(1.0), 2.0) * x
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError) as info:
        s.run(y)
    assert "'features'" in str(info.value) and f"test_session.py:{line}" in str(info.value)


def test_a_training_step_compiles_once_and_never_redoes_graph_analysis(monkeypatch):
    counts = collections.Counter()
    for module, names in (("tensorweave.runtime.session", ["compile_plan"]),
                          ("tensorweave.runtime.plan", ["build_plan_graph", "run_passes", "place", "partition"])):
        for name in names:
            real = getattr(__import__(module, fromlist=[name]), name)
            monkeypatch.setattr(f"{module}.{name}", lambda *a, _real=real, _name=name, **k: (
                counts.update([_name]), _real(*a, **k))[1])
    x = tf.placeholder(tf.float32, [None, 4])
    labels = tf.placeholder(tf.int32, [None])
    logits = tf.layers.dense(tf.layers.dense(x, 8, activation=tf.nn.relu), 3)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_or_create_global_step())
    rng = np.random.default_rng(0)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        after_init = dict(counts)
        losses = [s.run([train, loss], {x: rng.normal(size=(8, 4)), labels: rng.integers(0, 3, 8)})[1]
                  for _ in range(25)]
    assert after_init["compile_plan"] == 1
    assert {name: counts[name] - after_init.get(name, 0) for name in counts} == {
        "compile_plan": 1, "build_plan_graph": 1, "run_passes": 1, "place": 1, "partition": 1}
    assert np.isfinite(losses).all()


def test_an_imported_graph_def_computes_what_the_original_does():
    rng = np.random.default_rng(1)
    x = tf.placeholder(tf.float32, [None, 5], name="x")
    w = tf.constant(rng.normal(size=(5, 3)).astype(np.float32), name="w")
    h = tf.nn.relu(tf.matmul(x, w) + tf.constant([0.1, -0.2, 0.3]))
    out = tf.identity(tf.nn.softmax(tf.concat([h, h[:, :1] * 2.0], 1)), name="out")
    n = tf.placeholder(tf.int32, [], name="n")
    looped = tf.identity(tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 0.5), [0, tf.reduce_sum(out)])[1],
                         name="looped")
    data = rng.normal(size=(4, 5)).astype(np.float32)
    with tf.Session() as s:
        want = s.run([out, looped], {x: data, n: 3})
    serialized = tf.get_default_graph().as_graph_def().SerializeToString()
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(tf.GraphDef.FromString(serialized), name="copy")
        assert g2.as_graph_def().node[0].name.startswith("copy/")
        with tf.Session() as s:
            got = s.run(["copy/out:0", "copy/looped:0"], {"copy/x:0": data, "copy/n:0": 3})
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_eval_run_and_default_sessions():
    c = tf.add(tf.constant(2.0), 3.0)
    with pytest.raises(ValueError, match="no default session"):
        c.eval()
    with tf.Session() as s:
        assert c.eval() == 5.0
        assert tf.get_default_session() is s
        c.op.run()
    s = tf.InteractiveSession()
    try:
        assert c.eval() == 5.0
    finally:
        s.close()


def test_make_callable(sess):
    x = tf.placeholder(tf.float32, [2])
    y = tf.add(x, x)
    f = sess.make_callable([y], [x])
    np.testing.assert_array_equal(f([1.0, 2.0])[0], [2.0, 4.0])
    with pytest.raises(TypeError, match="takes 1 feed"):
        f()


def test_rank0_fetches_are_numpy_scalars(sess):
    v = sess.run(tf.constant(3))
    assert isinstance(v, np.int32)


def test_closed_session_refuses_runs():
    s = tf.Session()
    s.close()
    with pytest.raises(RuntimeError, match="closed"):
        s.run(tf.constant(1))


def test_two_cpu_devices_with_send_recv_both_executors():
    x = tf.placeholder(tf.float32, [1, 2])
    with tf.device("/cpu:1"):
        y = tf.add(x, x)
    z = tf.matmul(y, tf.constant([[1.0], [1.0]]))
    for executor in ("linear", "dataflow"):
        cfg = tf.ConfigProto(device_count={"CPU": 2}, executor=executor)
        with tf.Session(config=cfg) as s:
            np.testing.assert_array_equal(s.run(z, {x: [[1.0, 2.0]]}), [[6.0]])
            meta = tf.RunMetadata()
            s.run(z, {x: [[1.0, 2.0]]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                                             output_partition_graphs=True), run_metadata=meta)
            devices = {d.device for d in meta.step_stats.dev_stats}
            assert any(d.endswith("CPU:1") for d in devices) and any(d.endswith("CPU:0") for d in devices)
            ops = {n.op for g in meta.partition_graphs for n in g.node}
            assert {"_Send", "_Recv"} <= ops


@pytest.mark.cpu_only  # on a machine without a GPU, /device:GPU:0 cannot be satisfied
def test_unsatisfiable_device_names_op_request_and_kernel_devices():
    one, two = tf.constant(1.0), tf.constant(2.0)
    with tf.device("/device:GPU:0"):
        y = tf.add(one, two, name="on_gpu")
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(y)
    msg = str(info.value)
    assert "on_gpu" in msg and "GPU:0" in msg and "device:CPU:0" in msg and "allow_soft_placement" in msg
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as s:
        assert s.run(y) == 3.0


def _hand_built_counting_loop(parallel_iterations):
    """while i < n: i += 1; acc += i — built from the primitives directly."""
    n = tf.placeholder(tf.int32, [])
    attrs = {"frame_name": "count", "parallel_iterations": parallel_iterations}
    i_enter = apply_op("Enter", [tf.constant(0)], attrs)
    acc_enter = apply_op("Enter", [tf.constant(0)], attrs)
    n_enter = apply_op("Enter", [n], dict(attrs, is_constant=True))
    i = apply_op("Merge", [[i_enter, i_enter]])[0]
    acc = apply_op("Merge", [[acc_enter, acc_enter]])[0]
    cond = apply_op("LoopCond", [tf.less(i, n_enter)])
    i_exit_in, i_body = apply_op("Switch", [i, cond])
    acc_exit_in, acc_body = apply_op("Switch", [acc, cond])
    pivot = tf.identity(i_body)
    with tf.control_dependencies([pivot]):
        one = tf.constant(1)
    i_next = tf.add(pivot, one)
    acc_next = tf.add(tf.identity(acc_body), i_next)
    i.op._update_input(1, apply_op("NextIteration", [i_next]))
    acc.op._update_input(1, apply_op("NextIteration", [acc_next]))
    return n, apply_op("Exit", [i_exit_in]), apply_op("Exit", [acc_exit_in])


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_dataflow_executor_runs_loop_frames(parallel_iterations):
    n, i_out, acc_out = _hand_built_counting_loop(parallel_iterations)
    with tf.Session() as s:
        assert s.run([i_out, acc_out], {n: 100}) == [100, 5050]
        assert s.run([i_out, acc_out], {n: 0}) == [0, 0]


def test_dead_tensor_fetch_and_merge():
    p = tf.placeholder(tf.bool, [])
    f, t = apply_op("Switch", [tf.constant(3), p])
    merged = apply_op("Merge", [[tf.add(f, 100), tf.add(t, 1000)]])
    with tf.Session() as s:
        assert s.run(merged, {p: True}) == [1003, 1]
        assert s.run(merged, {p: False}) == [103, 0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="dead"):
            s.run(t, {p: False})


def test_cycle_not_built_from_loops_is_refused():
    a = tf.placeholder(tf.float32, [])
    b = tf.add(a, 1.0)
    c = tf.add(b, 1.0)
    b.op._update_input(0, c)
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="cycle"):
            s.run(c)


def test_import_graph_def_maps_control_inputs_to_existing_ops():
    """What a parameter server does when a worker's graph grows: import only the new nodes, wired to the old."""
    with tf.Graph().as_default() as g1:
        gate = tf.no_op(name="gate")
        x = tf.constant(3.0, name="x")
        with tf.control_dependencies([gate]):
            tf.identity(x, name="out")
    new_nodes = tf.GraphDef(node=[n for n in g1.as_graph_def().node if n.name == "out"])
    with tf.Graph().as_default():
        old_gate, old_x = tf.no_op(name="gate"), tf.constant(3.0, name="x")
        (out,) = tf.import_graph_def(new_nodes, input_map={"x:0": old_x, "^gate": old_gate},
                                     return_elements=["out:0"], name="")
        assert out.name == "out:0" and out.op.inputs[0] is old_x and out.op.control_inputs == [old_gate]
        with tf.Session() as sess:
            assert sess.run(out) == 3.0
