"""Partitioning across CPU devices: Send/Recv pairs and their rendezvous keys, one transfer per
tensor and destination, control edges, cond and while_loop across devices, 16-bit transfers."""

import collections
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import plugins
from tensorweave.extension import hookimpl
from tensorweave.framework.attr_value import from_attr_value
from tensorweave.runtime.device_mgr import DeviceMgr
from tensorweave.runtime.rendezvous import LocalRendezvous, make_key, parse_key


def _attr(node, key):
    """The Python value of a GraphDef node's attr."""
    return from_attr_value(node.attr[key])

CPU = "/job:localhost/replica:0/task:0/device:CPU:"


def partition_graphs(sess, fetches, feed_dict=None):
    meta = tf.RunMetadata()
    value = sess.run(fetches, feed_dict, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    return value, meta.partition_graphs


def _ops(graphs, op):
    return [n for g in graphs for n in g.node if n.op == op]


def _config(n=2, **kw):
    return tf.ConfigProto(device_count={"CPU": n}, **kw)


@pytest.mark.parametrize("executor", ["linear", "dataflow"])
def test_one_transfer_per_tensor_and_destination(executor):
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:0"):
        shared = tf.multiply(x, 2.0, name="shared")
    with tf.device("/cpu:1"):
        on_one = tf.add_n([shared + 1.0, shared * 3.0, tf.abs(shared)])
    with tf.device("/cpu:2"):
        on_two = tf.add(shared, shared)
    with tf.Session(config=_config(3, executor=executor)) as s:
        (one, two), graphs = partition_graphs(s, [on_one, on_two], {x: [1.0, -2.0, 3.0]})
    np.testing.assert_allclose(one, [2 + 1 + 6 + 2, -4 + 1 - 12 + 4, 6 + 1 + 18 + 6])
    np.testing.assert_allclose(two, [4.0, -8.0, 12.0])
    sends = [n for n in _ops(graphs, "_Send") if _attr(n, "tensor_name") == "shared:0"]
    recvs = [n for n in _ops(graphs, "_Recv") if _attr(n, "tensor_name") == "shared:0"]
    assert sorted(_attr(n, "recv_device") for n in sends) == [CPU + "1", CPU + "2"]
    assert sorted(n.device for n in recvs) == [CPU + "1", CPU + "2"]
    for send in sends:
        assert send.device == CPU + "0" and _attr(send, "send_device") == CPU + "0"
        assert isinstance(_attr(send, "send_device_incarnation"), int)


def test_rendezvous_keys_name_devices_tensor_frame_and_iteration():
    key = make_key(CPU + "0", 0xABC, "/job:worker/replica:0/task:3/device:CPU:0", "w:0", "/while;2", 7)
    assert parse_key(key) == {"send_device": CPU + "0", "incarnation": 0xABC,
                              "recv_device": "/job:worker/replica:0/task:3/device:CPU:0", "tensor_name": "w:0",
                              "frame_id": "/while;2", "iteration": 7}
    assert make_key(CPU + "0", 1, CPU + "1", "t:0", "", 0) != make_key(CPU + "0", 1, CPU + "1", "t:0", "", 1)


def test_control_edges_cross_devices():
    with tf.device("/cpu:0"):
        counter = tf.Variable(0.0, name="counter")
        bump = counter.assign_add(1.0)
    with tf.device("/cpu:1"):
        with tf.control_dependencies([bump]):
            after = tf.add(tf.constant(5.0), tf.constant(1.0), name="after")
    with tf.Session(config=_config(2)) as s:
        s.run(counter.initializer)
        value, graphs = partition_graphs(s, after)
        for _ in range(2):
            s.run(after)
        assert value == 6.0 and s.run(counter) == 3.0
    (token,) = _ops(graphs, "_ControlToken")
    assert token.device == CPU + "0"
    (after_node,) = [n for g in graphs for n in g.node if n.input and n.device == CPU + "1"
                     and any(i.startswith("^") and "_recv_ctrl" in i for i in n.input)]
    assert after_node.device == CPU + "1"


def test_cond_across_three_devices_with_dead_branches():
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [2], name="x")

    def yes():
        with tf.device("/cpu:1"):
            return tf.multiply(x, 10.0)

    def no():
        with tf.device("/cpu:2"):
            return tf.add(x, -1.0)

    with tf.device("/cpu:0"):
        out = tf.cond(p, yes, no)
    with tf.device("/cpu:1"):
        after = tf.reduce_sum(out)  # a straight-line partition reading a value that may be dead
    with tf.Session(config=_config(3)) as s:
        (got, total), graphs = partition_graphs(s, [out, after], {p: True, x: [1.0, 2.0]})
        np.testing.assert_allclose(got, [10.0, 20.0])
        assert total == 30.0
        np.testing.assert_allclose(s.run(out, {p: False, x: [1.0, 2.0]}), [0.0, 1.0])
    assert {n.device for n in _ops(graphs, "Mul")} == {CPU + "1"}
    assert {n.device for n in _ops(graphs, "Merge")} == {CPU + "0"}


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_while_loop_body_and_condition_on_different_devices(parallel_iterations):
    n = tf.placeholder(tf.int32, [], name="n")
    w = tf.constant([[0.5, 0.0], [0.0, 2.0]])

    def cond(i, v):
        with tf.device("/cpu:0"):
            return tf.less(i, n)

    def body(i, v):
        with tf.device("/cpu:1"):
            v = tf.matmul(v, w) + 1.0
        with tf.device("/cpu:2"):
            i = i + 1
        return i, v

    with tf.device("/cpu:0"):
        loop = tf.while_loop(cond, body, [tf.constant(0), tf.ones([1, 2])], parallel_iterations=parallel_iterations)
    with tf.Session(config=_config(3)) as s:
        (i, v), graphs = partition_graphs(s, loop, {n: 5})
        want = np.ones([1, 2])
        for _ in range(5):
            want = want @ np.array([[0.5, 0.0], [0.0, 2.0]]) + 1.0
        assert i == 5
        np.testing.assert_allclose(v, want)
        assert s.run(loop, {n: 0})[0] == 0  # no iteration at all
        np.testing.assert_allclose(s.run(loop, {n: 1})[1], [[1.5, 3.0]])
    control_loop_devices = {n.device for n in _ops(graphs, "Enter") if "_control_loop" in n.name}
    assert {CPU + "1", CPU + "2"} <= control_loop_devices


def test_nested_loops_across_devices_and_their_gradient():
    x = tf.placeholder(tf.float32, [], name="x")

    def outer_body(i, acc):
        def inner_body(j, a):
            with tf.device("/cpu:1"):
                a = a * x
            return j + 1, a

        _, prod = tf.while_loop(lambda j, a: j < 2, inner_body, [tf.constant(0), tf.constant(1.0)])
        return i + 1, acc + prod

    with tf.device("/cpu:0"):
        _, total = tf.while_loop(lambda i, acc: i < 3, outer_body, [tf.constant(0), tf.constant(0.0)])
    grad = tf.gradients(total, x)[0]
    with tf.Session(config=_config(2)) as s:
        got, g = s.run([total, grad], {x: 1.5})
    assert got == pytest.approx(3 * 1.5 ** 2) and g == pytest.approx(3 * 2 * 1.5)


def test_a_cond_inside_a_loop_with_each_branch_on_its_own_device():
    n = tf.placeholder(tf.int32, [])

    def body(i, acc):
        def odd():
            with tf.device("/cpu:1"):
                return acc * 2.0

        def even():
            with tf.device("/cpu:2"):
                return acc + 1.0

        return i + 1, tf.cond(tf.equal(i % 2, 1), odd, even)

    with tf.device("/cpu:0"):
        _, out = tf.while_loop(lambda i, a: i < n, body, [0, 1.0])
    with tf.Session(config=_config(3)) as s:
        for k in range(6):
            want = 1.0
            for i in range(k):
                want = want * 2.0 if i % 2 else want + 1.0
            assert s.run(out, {n: k}) == want


def test_a_loop_reading_a_tensor_from_another_device_every_iteration():
    with tf.device("/cpu:1"):
        step = tf.constant(2.5, name="step")
    with tf.device("/cpu:0"):
        _, total = tf.while_loop(lambda i, t: i < 4, lambda i, t: (i + 1, t + step), [0, 0.0])
    with tf.Session(config=_config(2)) as s:
        assert s.run(total) == 10.0


def test_float32_transfers_compress_to_16_bits_when_asked():
    x = tf.placeholder(tf.float32, [3])
    k = tf.placeholder(tf.int32, [3])
    with tf.device("/cpu:1"):
        y = tf.multiply(x, 1.0)
        j = tf.add(k, 0)
    value = np.array([1.0001, 3.14159265, 6000.7], np.float32)
    ints = np.array([1, 1 << 20, -7], np.int32)
    for compress, close in [(False, 0.0), (True, 1e-3), ("bfloat16", 1e-2)]:
        with tf.Session(config=_config(2, compress_transfers=compress)) as s:
            (got, gi), graphs = partition_graphs(s, [y, j], {x: value, k: ints})
        np.testing.assert_array_equal(gi, ints)
        if close:
            assert not np.array_equal(got, value)
            np.testing.assert_allclose(got, value, rtol=close)
            assert got.dtype == np.float32
        else:
            np.testing.assert_array_equal(got, value)
        schemes = {_attr(n, "T").name: _attr(n, "compress") for n in _ops(graphs, "_Send")}
        assert schemes["int32"] == "" and schemes["float32"] == {False: "", True: "float16"}.get(compress, compress)


def test_concurrent_steps_keep_their_transfers_apart():
    x = tf.placeholder(tf.float32, [])
    with tf.device("/cpu:1"):
        y = tf.multiply(x, 2.0)
    with tf.device("/cpu:0"):
        z = tf.add(y, 1.0)
    results = collections.defaultdict(list)
    with tf.Session(config=_config(2)) as s:
        def worker(k):
            for i in range(30):
                results[k].append(s.run(z, {x: float(k * 100 + i)}))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for k in range(4):
        assert results[k] == [2.0 * (k * 100 + i) + 1.0 for i in range(30)]


class _TwoProcessMaster:
    """A transport's master for one of two SPMD "processes" (threads here): task 0 and task 1 of job
    ``w`` each have CPU:0; the other task's device is remote; steps meet in a shared rendezvous."""

    shared = {}

    def __init__(self, target, config):
        task = int(target.rsplit("/", 1)[-1])
        mgr = DeviceMgr(tf.ConfigProto(device_count={"CPU": 1}), job="w", task=task)
        mgr.devices = [d for d in mgr.devices if d.device_type == "CPU"]
        other = type(mgr.devices[0])(f"/job:w/replica:0/task:{1 - task}/device:CPU:0", 0)
        other.is_remote = True
        mgr._by_name[other.name] = other
        by_task = {task: mgr.devices[0], 1 - task: other}
        for t, device in by_task.items():
            device.incarnation = t + 1  # both processes must agree on every device's incarnation
        mgr.matching = lambda spec: [by_task[1 if "task:1" in str(spec) else 0]]  # no task: the chief's
        mgr.host_device = lambda: by_task[0]  # feeds and fetches live with the chief
        self.device_mgr = mgr
        self.steps = 0

    def rendezvous(self, plan):
        self.steps += 1  # the k-th run of a signature meets the other process's k-th run
        return _TwoProcessMaster.shared.setdefault((plan._signature[0][0].name, self.steps), LocalRendezvous())


class _TwoProcessTransport:
    @hookimpl
    def tensorweave_register_transports(self, registrar):
        registrar.add_transport("twoproc", _TwoProcessMaster)


def test_partitions_of_another_process_are_left_to_it_through_the_transport():
    try:
        plugins.reload(extra_plugins=[(_TwoProcessTransport(), "twoproc")])
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.device("/job:w/task:1"):
            y = tf.multiply(x, 3.0, name="on_task_1")
        z = tf.add(y, 1.0, name="on_chief")
        out = {}

        def process(task):
            with tf.Session(f"twoproc://job/{task}") as s:
                out[task] = [s.run(z, {x: [1.0, 2.0]}) for _ in range(3)]
                out[f"plan{task}"] = next(iter(s._plans.values()))

        threads = [threading.Thread(target=process, args=(t,)) for t in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        plugins.reload()
    for value in out[0]:
        np.testing.assert_allclose(value, [4.0, 7.0])
    assert out[1] == [None, None, None]  # the chief fetches; task 1 ran its share
    chief_plan, worker_plan = out["plan0"], out["plan1"]
    assert [d.name for d, _ in chief_plan.partitions] == ["/job:w/replica:0/task:0/device:CPU:0"]
    assert [name for name, _ in chief_plan.remote_partitions] == ["/job:w/replica:0/task:1/device:CPU:0"]
    assert [d.name for d, _ in worker_plan.partitions] == ["/job:w/replica:0/task:1/device:CPU:0"]
    assert len(chief_plan.partition_graph_defs()) == 2
