"""Placement on several CPU devices: explicit and partial device specs, colocation, kernel
availability, soft placement, the cost model's simulated execution, log_device_placement."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import placement_sim

pytestmark = pytest.mark.cpu_only

CPU = "/job:localhost/replica:0/task:0/device:CPU:"


def placements(sess, fetches, feed_dict=None):
    """Runs once and returns {node name: device} from the partition graphs."""
    meta = tf.RunMetadata()
    sess.run(fetches, feed_dict, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    return {n.name: n.device for g in meta.partition_graphs for n in g.node}


def _config(n=2, **kw):
    return tf.ConfigProto(device_count={"CPU": n}, **kw)


def test_explicit_partial_nested_and_function_device_specs():
    x = tf.placeholder(tf.float32, [])
    with tf.device("/cpu:1"):
        a = tf.add(x, 1.0, name="legacy")
    with tf.device("/job:localhost"):
        with tf.device("/device:CPU:2"):
            b = tf.add(a, 1.0, name="nested")
    with tf.device(tf.DeviceSpec(device_type="CPU", device_index=1)):
        c = tf.add(b, 1.0, name="spec")
    with tf.device(lambda op: "/cpu:2" if op.type == "Mul" else "/cpu:0"):
        d = tf.multiply(c, 2.0, name="by_function")
        e = tf.add(d, 1.0, name="not_mul")
    with tf.Session(config=_config(3)) as s:
        where = placements(s, e, {x: 1.0})
        assert s.run(e, {x: 1.0}) == 9.0
    assert where["legacy"] == CPU + "1" and where["nested"] == CPU + "2" and where["spec"] == CPU + "1"
    assert where["by_function"] == CPU + "2" and where["not_mul"] == CPU + "0"


def test_colocation_with_a_variable_and_its_reads_and_updates():
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    read = v.read_value()
    inc = v.assign_add(2.0)
    with tf.colocate_with(v):
        doubled = tf.multiply(read, 2.0, name="doubled")
    with tf.Session(config=_config(2)) as s:
        s.run(v.initializer)
        where = placements(s, [doubled, inc])
        assert s.run(v) == 3.0
    assert where["doubled"] == CPU + "1"
    assert all(d == CPU + "1" for name, d in where.items() if name.startswith("v/") or name.startswith("AssignAdd"))


def test_conflicting_colocation_names_both_requests_unless_soft():
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v")
    with tf.colocate_with(v):
        y = tf.multiply(v.read_value(), 3.0, name="scaled")
    y.op._set_device("/device:CPU:1")  # as an imported GraphDef could say
    with tf.Session(config=_config(2)) as s:
        s.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(y)
    message = str(info.value)
    assert "'scaled'" in message and "CPU:1" in message and "CPU:0" in message and "allow_soft_placement" in message
    with tf.Session(config=_config(2, allow_soft_placement=True)) as s:
        s.run(v.initializer)
        assert s.run(y) == 3.0


def test_missing_device_names_op_request_and_kernel_devices_or_goes_soft():
    with tf.device("/cpu:7"):
        y = tf.add(tf.constant(1.0), 2.0, name="far")
    with tf.Session(config=_config(2)) as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(y)
    message = str(info.value)
    assert "'far'" in message and "CPU:7" in message and CPU + "0" in message and CPU + "1" in message
    with tf.Session(config=_config(2, allow_soft_placement=True)) as s:
        assert s.run(y) == 3.0


def test_a_device_without_the_kernel_is_named_with_the_devices_that_have_one():
    plugin = pytest.importorskip("tensorweave_example_plugin")
    x = tf.placeholder(tf.float32, [2])
    a, b = tf.placeholder(tf.float32, [1, 2]), tf.placeholder(tf.float32, [2, 1])
    with tf.device("/device:TOY:0"):
        ok = plugin.swish(x)
        bad = tf.matmul(a, b, name="toy_matmul")
    feed = {a: [[1.0, 2.0]], b: [[1.0], [1.0]]}
    with tf.Session(config=_config(2)) as s:
        where = placements(s, ok, {x: [0.0, 1.0]})
        assert where[ok.op.name].endswith("TOY:0")
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(bad, feed)
    message = str(info.value)
    assert "toy_matmul" in message and "TOY:0" in message and CPU + "0" in message and CPU + "1" in message
    with tf.Session(config=_config(2, allow_soft_placement=True)) as s:
        assert placements(s, bad, feed)["toy_matmul"].startswith(CPU) and s.run(bad, feed) == [[3.0]]


def _heavy_branches():
    x = tf.placeholder(tf.float32, [384, 384])
    w1 = tf.placeholder(tf.float32, [384, 384])
    w2 = tf.placeholder(tf.float32, [384, 384])
    left = tf.matmul(tf.matmul(x, w1, name="left_1"), w1, name="left_2")
    right = tf.matmul(tf.matmul(x, w2, name="right_1"), w2, name="right_2")
    return (x, w1, w2), left, right


def test_cost_model_splits_independent_heavy_branches_and_keeps_a_chain_together():
    (x, w1, w2), left, right = _heavy_branches()
    total = tf.add(left, right, name="total")
    chain = tf.matmul(tf.matmul(tf.matmul(x, w1, name="c1"), w1, name="c2"), w1, name="c3")
    rng = np.random.RandomState(0)
    feed = {t: rng.rand(384, 384).astype(np.float32) / 384 for t in (x, w1, w2)}
    with tf.Session(config=_config(2)) as s:
        where = placements(s, total, feed)
        chained = placements(s, chain, feed)
        got = s.run(total, feed)
    assert where["left_1"] == where["left_2"] and where["right_1"] == where["right_2"]
    assert where["left_1"] != where["right_1"]
    assert len({chained["c1"], chained["c2"], chained["c3"]}) == 1
    want = feed[x] @ feed[w1] @ feed[w1] + feed[x] @ feed[w2] @ feed[w2]
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_light_ops_and_constants_stay_with_their_inputs():
    x = tf.placeholder(tf.float32, [4])
    y = tf.reduce_sum(tf.add(tf.multiply(x, 2.0, name="m"), 1.0, name="a"), name="s")
    with tf.Session(config=_config(3)) as s:
        where = placements(s, y, {x: np.ones(4)})
    assert set(where.values()) == {CPU + "0"} and not any(n.startswith("_send") for n in where)


def test_one_device_of_the_preferred_type_never_runs_the_simulation(monkeypatch):
    monkeypatch.setattr("tensorweave.runtime.placer.simulate_placement",
                        lambda *a, **k: pytest.fail("the simulation ran for a single CPU device"))
    (x, w1, w2), left, right = _heavy_branches()
    feed = {t: np.eye(384, dtype=np.float32) for t in (x, w1, w2)}
    with tf.Session() as s:  # other device types a plugin brings have a lower priority than CPU
        np.testing.assert_allclose(s.run(left + right, feed), 2 * np.eye(384))


def test_measured_times_replace_estimates_and_drive_later_placements():
    x = tf.placeholder(tf.float32, [None, None])  # unknown shapes: the estimates see tiny products
    left = tf.matmul(tf.matmul(x, x, name="left_1"), x, name="left_2")
    right = tf.matmul(tf.matmul(x, tf.transpose(x), name="right_1"), x, name="right_2")
    total = tf.add(left, right)
    feed = {x: np.eye(384, dtype=np.float32)}
    with tf.Session(config=_config(2)) as s:
        before = placements(s, total, feed)
        meta = tf.RunMetadata()
        s.run(total, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
        stats = {n.node_name: n for d in meta.step_stats.dev_stats for n in d.node_stats}
        assert s._cost_model.measured_seconds("left_1") == pytest.approx(stats["left_1"].op_end_rel_micros / 1e6)
        after = placements(s, [total, left], feed)  # a new signature is placed with the measured times
        np.testing.assert_allclose(s.run(total, feed), 2 * np.eye(384))
    assert before["left_1"] == before["right_1"]
    assert after["left_1"] != after["right_1"] and after["left_1"] == after["left_2"]


def test_log_device_placement_prints_each_op_as_tf1(capfd):
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        y = tf.multiply(x, 3.0, name="times_three")
    with tf.Session(config=_config(2, log_device_placement=True)) as s:
        assert s.run(y, {x: 2.0}) == 6.0
    err = capfd.readouterr().err
    assert f"times_three: (Mul): {CPU}1" in err.splitlines()
    assert f"times_three/y: (Const): {CPU}1" in err.splitlines()  # TF1: converted inside the op's scope


def test_simulation_on_its_own_prefers_the_inputs_device_unless_another_wins_clearly():
    class Dev:
        def __init__(self, name):
            self.name, self.device_type, self.is_host = name, "CPU", True
            self.bytes_per_second = self.flops_per_second = 1e10

    class Model:
        def compute_seconds(self, node, device):
            return node.cost

        def tensor_bytes(self, node, slot):
            return 8

        def transfer_seconds(self, nbytes, src, dst):
            return 0.0 if src is dst else 1e-5

    class Node:
        def __init__(self, name, cost, inputs=()):
            self.name, self.cost, self.op_type = name, cost, "MatMul"
            self.inputs, self.control_inputs = [(i, 0) for i in inputs], []

    d0, d1 = Dev("d0"), Dev("d1")
    src = Node("src", 1e-6)
    a, b = Node("a", 1e-2, [src]), Node("b", 1e-2, [src])
    tiny = Node("tiny", 1e-6, [src])
    order = [src, a, b, tiny]
    group_of = {id(n): i for i, n in enumerate(order)}
    decided = placement_sim.simulate_placement(order, group_of, {}, {i: [d0, d1] for i in range(4)}, Model())
    assert [decided[i].name for i in range(4)] == ["d0", "d0", "d1", "d0"]


def test_a_stateful_op_keeps_its_device_across_runs_and_a_colocated_op_without_its_kernel_is_named():
    """An earlier run put the counter (its state) on TOY; a later op colocated with it has no TOY kernel.
    Moving the group to the CPU would read a fresh, empty state: the placer says why it cannot instead."""
    pytest.importorskip("tensorweave_example_plugin")
    from tensorweave import plugins
    from tensorweave.extension import KernelSet, OpDefList, apply_op, hookimpl

    class Counter:
        ops = OpDefList()
        ops.define("TestCounter", outputs=["count: float32"], is_stateful=True)
        ops.define("TestCpuOnly", inputs=["x: float32"], outputs=["y: float32"])
        toy, cpu = KernelSet("TOY"), KernelSet("CPU")
        toy.add("TestCounter", lambda: np.float32(1.0))
        cpu.add("TestCounter", lambda: np.float32(1.0))
        cpu.add("TestCpuOnly", lambda x: x)

        @hookimpl
        def tensorweave_register_ops(self, registrar):
            registrar.add_ops(self.ops)

        @hookimpl
        def tensorweave_register_kernels(self, registrar):
            registrar.add_kernels(self.toy)
            registrar.add_kernels(self.cpu)

    plugins.reload(extra_plugins=[(Counter(), "counter")])
    try:
        with tf.Graph().as_default():
            with tf.device("/device:TOY:0"):
                count = apply_op("TestCounter", name="counter")
            with tf.Session(config=_config(1, allow_soft_placement=True)) as s:
                assert placements(s, count)["counter"].endswith("TOY:0")
                with tf.colocate_with(count.op):
                    later = apply_op("TestCpuOnly", [count], name="cpu_only")
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    s.run(later)
        message = str(info.value)
        assert "'counter' (TestCounter)" in message and "TOY:0" in message, message
        assert "'cpu_only' (TestCpuOnly), colocated with it, has no TOY kernel" in message, message
    finally:
        plugins.reload()
