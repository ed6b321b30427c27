"""The GPU kernel set, placement preference and device-memory copies, run for real on a numpy stand-in for the
GPU (``conftest.StandInGPU``: memory of its own, numpy as its array module). The same registrations serve cupy
on a GPU; here they show the kernels bind their attrs, place above the CPU and copy across the edges."""

import numpy as np
import pytest

import tensorweave as tf

from tensorweave import plugins
from tensorweave.extension import hookimpl
from tensorweave_cpu.kernels import training as cpu_training
from tensorweave_cuda.generic import retarget
from tensorweave_cuda.plugin import gpu_kernels

from conftest import STAND_IN, StandInPlugin
from op_cases import run_variable_program

ON_STAND_IN = f"/device:{STAND_IN}:0"


def _config(stand_in_devices=1, log=False):
    """The stand-in as the only accelerator: a real GPU, where there is one, is left out (it would outrank it)."""
    return tf.ConfigProto(device_count={STAND_IN: stand_in_devices, "GPU": 0}, allow_soft_placement=True,
                          log_device_placement=log)


def _placements(stderr):
    """op name -> device short name from log_device_placement lines."""
    out = {}
    for line in stderr.splitlines():
        if ": (" in line and "/device:" in line and ": (_Recv): " not in line:
            name, rest = line.split(": (", 1)
            out[name] = rest.split("/device:")[-1]
    return out


def _mlp(seed=3):
    tf.set_random_seed(seed)
    images = tf.placeholder(tf.float32, [None, 64])
    labels = tf.placeholder(tf.int64, [None])
    hidden = tf.layers.dense(images, 32, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 10, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return images, labels, loss, train


def _train(config, steps=5):
    images, labels, loss, train = _mlp()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 64)).astype(np.float32), rng.integers(0, 10, 16)
    with tf.Session(config=config) as s:
        s.run(tf.global_variables_initializer())
        return [s.run([loss, train], {images: x, labels: y})[0] for _ in range(steps)]


def test_training_places_ops_with_a_gpu_kernel_on_the_gpu_and_matches_the_cpu(stand_in, capfd):
    on_cpu = _train(_config(0))
    tf.reset_default_graph()
    capfd.readouterr()
    on_gpu = _train(_config(1, log=True))
    log = capfd.readouterr().err
    where = _placements(log)
    np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-6)
    transfers = [line for line in log.splitlines() if ": (_Recv): " in line]
    assert any(line.endswith(f"device:{STAND_IN}:0 <- /job:localhost/replica:0/task:0/device:CPU:0 (host to device)")
               for line in transfers), transfers
    assert any(line.endswith(f"device:CPU:0 <- /job:localhost/replica:0/task:0/device:{STAND_IN}:0 (device to host)")
               for line in transfers), transfers
    assert on_gpu[-1] < on_gpu[0]
    assert where["hidden/MatMul"] == f"{STAND_IN}:0" and where["hidden/Relu"] == f"{STAND_IN}:0"
    assert where["SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits"] == f"{STAND_IN}:0"
    assert where["hidden/kernel"] == where["GradientDescent/update_hidden/kernel/ResourceApplyGradientDescent"] \
        == f"{STAND_IN}:0"
    assert where["hidden/kernel/Initializer/random_uniform/RandomUniform"] == "CPU:0"  # a host op, copied over
    device = stand_in.devices[0]
    # Feeds, initial values and the fetched loss cross the edge; the weights never leave the device.
    assert device.copies_in >= 2 * 5 + 2 and device.copies_out >= 5
    assert {"MatMul", "Relu", "ReluGrad", "BiasAdd", "Mean", "AssignVariableOp", "ReadVariableOp"} <= set(device.bound)


def test_string_ops_stay_on_the_host_and_numbers_go_to_the_gpu(stand_in, capfd):
    word_in, number_in = tf.placeholder(tf.string, [2]), tf.placeholder(tf.float32, [2])
    word = tf.identity(word_in, name="word")
    number = tf.identity(number_in, name="number")
    with tf.Session(config=_config(log=True)) as s:
        got_word, got_number = s.run([word, number], {word_in: ["a", "bc"], number_in: [1.5, 2.5]})
    where = _placements(capfd.readouterr().err)
    assert where["word"] == "CPU:0" and where["number"] == f"{STAND_IN}:0"
    assert got_word.tolist() == ["a", "bc"] and got_number.tolist() == [1.5, 2.5]


def test_a_constant_is_copied_to_the_device_once_when_its_kernel_is_built(stand_in):
    with tf.device(ON_STAND_IN):
        y = tf.constant(np.arange(4.0)) * 2.0
    with tf.Session(config=_config()) as s:
        first = s.run(y)
        copies = stand_in.devices[0].copies_in
        second = s.run(y)
        assert stand_in.devices[0].copies_in == copies
    assert first.tolist() == second.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_variable_updates_and_scatters_on_the_gpu_match_the_cpu_kernels(stand_in):
    want = run_variable_program(ON_STAND_IN, _config(0))
    tf.reset_default_graph()
    got = run_variable_program(ON_STAND_IN, _config(1))
    assert len(got) == len(want) == 20 and want[-1] == False  # noqa: E712 - destroyed, then looked up afresh
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert want[0] == False and want[17] == True and want[12:16] == [0, 1, 2, True]  # noqa: E712
    np.testing.assert_allclose(want[11], [[0.55, 2.75], [10.0, 2.0], [20.0, 82.5], [1.75, 5.0]])
    assert want[16].tolist() == [4, 2] and want[18].tolist() == [[1.75, 5.0], [0.55, 2.75], [1.75, 5.0]]
    bound = set(stand_in.devices[0].bound)
    assert {"AssignVariableOp", "AssignAddVariableOp", "ResourceScatterMul", "ResourceScatterDiv",
            "ResourceScatterMin", "ResourceCountUpTo", "ResourceStridedSliceAssign", "VariableShape",
            "VarIsInitializedOp", "ResourceGather", "DestroyResourceOp"} <= bound


def test_unique_segment_sum_and_range_forms_match_the_cpu(stand_in):
    def program():  # fed, so that constant folding leaves the ops to run
        x, data, limit = tf.placeholder(tf.int32, [6]), tf.placeholder(tf.float16, [3, 2]), tf.placeholder(tf.int32)
        with tf.device(ON_STAND_IN):
            values, idx, counts = tf.unique_with_counts(x)
            seg = tf.segment_sum(data, tf.constant([0, 0, 2]))
            r = tf.range(2, limit, 3)
        feed = {x: [5, 3, 5, 1, 3, 3], data: [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], limit: 11}
        return [values, idx, counts, seg, r], feed

    want = tf.Session(config=_config(0)).run(*program())
    tf.reset_default_graph()
    got = tf.Session(config=_config(1)).run(*program())
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.tolist() == w.tolist()
    assert got[0].tolist() == [5, 3, 1] and got[1].tolist() == [0, 1, 0, 2, 1, 1] and got[2].tolist() == [2, 3, 1]
    assert got[3].tolist() == [[4.0, 6.0], [0.0, 0.0], [5.0, 6.0]] and got[4].tolist() == [2, 5, 8]
    assert {"UniqueWithCounts", "SegmentSum", "Range"} <= set(stand_in.devices[0].bound)


def test_an_unsorted_segment_id_is_refused_with_the_cpu_message(stand_in):
    ids = tf.placeholder(tf.int32, [3])
    with tf.device(ON_STAND_IN):
        seg = tf.segment_sum(tf.constant([1.0, 2.0, 3.0]), ids)
    with tf.Session(config=_config()) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids must be non-negative and sorted"):
            s.run(seg, {ids: [1, 0, 1]})
    assert "SegmentSum" in stand_in.devices[0].bound


def test_loop_and_cond_predicates_are_read_through_the_device(stand_in):
    """A Switch reads its predicate on the host through the device's ``to_host``: on a GPU the predicate's kernel
    runs on the device's stream, and reading its memory directly raced it (found on an H200: loops ran the wrong
    number of iterations and their Exits came out dead)."""
    n = tf.placeholder(tf.int32, [])
    with tf.device(ON_STAND_IN):
        _, total = tf.while_loop(lambda i, t: tf.less(i, n), lambda i, t: (i + 1, t + i), [0, 0])
        picked = tf.cond(total > 5, lambda: total * 2, lambda: total - 1)
    with tf.Session(config=_config()) as s:
        device = stand_in.devices[0]
        before = device.copies_out
        assert s.run(picked, {n: 4}) == 12  # 0+1+2+3 = 6 > 5
        # 5 loop predicates (4 true, 1 false) for each of the two loop variables' Switches, the cond's predicate
        # for each of its Switches, and the fetched result.
        assert device.copies_out - before >= 2 * 5 + 1 + 1
        assert s.run(picked, {n: 2}) == 0


def test_new_state_goes_where_its_colocated_partners_in_the_whole_graph_have_kernels(stand_in, capfd):
    """The first run places only the variable, but a queue colocated with it (as SyncReplicasOptimizer's token
    queue is with global_step) has no GPU kernel: the variable goes to the CPU, as TF's whole-graph placer puts
    it, instead of to the GPU where a later run could not follow (found on an H200)."""
    step = tf.Variable(0, name="global_step")
    with tf.colocate_with(step):
        tokens = tf.FIFOQueue(2, tf.int32, name="tokens")
        put = tokens.enqueue(step.read_value() + 5)
    weights = tf.Variable(np.ones(3, np.float32), name="weights")
    with tf.Session(config=_config(log=True)) as s:
        s.run(tf.global_variables_initializer())
        s.run(put)
        assert s.run(tokens.dequeue()) == 5
        assert s.run(weights * 2.0).tolist() == [2.0, 2.0, 2.0]
    where = _placements(capfd.readouterr().err)
    assert where["global_step"] == where["tokens"] == "CPU:0"
    assert where["weights"] == f"{STAND_IN}:0"


def test_check_numerics_runs_on_the_gpu_and_fails_with_the_cpu_message(stand_in):
    x = tf.placeholder(tf.float32, [2])
    with tf.device(ON_STAND_IN):
        checked = tf.check_numerics(x * 2.0, "doubled x")
    with tf.Session(config=_config()) as s:
        np.testing.assert_array_equal(s.run(checked, {x: [1.0, 2.0]}), [2.0, 4.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="doubled x : Tensor had Inf and NaN values"):
            s.run(checked, {x: [np.inf, np.nan]})
    assert "CheckNumerics" in stand_in.devices[0].bound



class _NoFtrlStandIn(StandInPlugin):
    """The stand-in GPU without kernels for Ftrl's update (as a plugin's GPU may lack an op the CPU has)."""

    @hookimpl
    def tensorweave_register_kernels(self, registrar):
        registrar.add_kernels(gpu_kernels(STAND_IN, include_cuda=False)[0])
        registrar.add_kernels(retarget(k, STAND_IN, k.priority) for k in cpu_training.KERNELS
                              if not k.op_type.endswith("ApplyFtrl"))


@pytest.fixture
def no_ftrl_stand_in():
    plugins.reload(extra_plugins=[(_NoFtrlStandIn(), "npgpu")])
    yield _NoFtrlStandIn
    StandInPlugin.devices = []
    plugins.reload()


def test_an_update_without_a_gpu_kernel_runs_on_the_cpu_with_its_variable(no_ftrl_stand_in, capfd):
    """An optimizer update with CPU kernels only: it and the variables and slots it updates are placed on the CPU,
    the model's other ops on the GPU, and the numbers are the CPU's."""
    def train(config):
        tf.set_random_seed(5)
        images, labels = tf.placeholder(tf.float32, [None, 64]), tf.placeholder(tf.int64, [None])
        hidden = tf.layers.dense(images, 8, activation=tf.nn.relu, name="hidden")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=hidden))
        train_op = tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01).minimize(loss)
        rng = np.random.default_rng(1)
        x, y = rng.standard_normal((16, 64)).astype(np.float32), rng.integers(0, 8, 16)
        with tf.Session(config=config) as s:
            s.run(tf.global_variables_initializer())
            return [s.run([loss, train_op], {images: x, labels: y})[0] for _ in range(3)]
    on_cpu = train(_config(0))
    tf.reset_default_graph()
    capfd.readouterr()
    on_gpu = train(_config(1, log=True))
    where = _placements(capfd.readouterr().err)
    np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-6)
    assert where["Ftrl/update_hidden/kernel/ResourceApplyFtrl"] == where["hidden/kernel"] == "CPU:0"
    assert where["hidden/kernel/Ftrl"] == where["hidden/kernel/Ftrl_1"] == "CPU:0"
    assert where["hidden/MatMul"] == f"{STAND_IN}:0"
