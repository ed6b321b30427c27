"""Broadcast-gradient fusion: Reshape(Sum(g, BroadcastGradientArgs(shape, Shape(g))[k]), shape) runs as one
_SumToShape node whose results equal the four ops' bit for bit (dtypes, leading and size-1 axes, empty and scalar
shapes, loops); chains whose parts something else reads stay; the user's graph keeps TF's ops; bad shapes fail
as before."""

import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.broadcast_gradient_ops import broadcast_gradient_args, unbroadcast

pytestmark = pytest.mark.cpu_only

PASS = "broadcast_gradient_fusion"


def _config(disabled=()):
    return tf.ConfigProto(graph_options=tf.GraphOptions(disable_passes=list(disabled)))


def _run(fetches, feed, disabled=(), steps=2):
    """The values of the last of ``steps`` runs, and the op types of the partition graphs."""
    meta = tf.RunMetadata()
    with tf.Session(config=_config(disabled)) as s:
        for _ in range(steps - 1):
            s.run(fetches, feed)
        out = s.run(fetches, feed, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    return out, collections.Counter(n.op for g in meta.partition_graphs for n in g.node)


def _compare(fetches, feed):
    """Runs with and without the pass; asserts identical values; returns the op counts with it."""
    fused, ops = _run(fetches, feed)
    plain, plain_ops = _run(fetches, feed, disabled=[PASS])
    for a, b in zip(fused if isinstance(fused, list) else [fused], plain if isinstance(plain, list) else [plain]):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    assert plain_ops["_SumToShape"] == 0
    return ops


SHAPES = [  # (target, gradient): size-1 axes, leading axes, both, none, scalar, empty
    ((64, 1), (64, 32)), ((32,), (64, 32)), ((1, 4), (2, 3, 4)), ((3, 4), (3, 4)), ((), (2, 3)),
    ((0, 1), (0, 5)), ((1,), (0,)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.complex64])
@pytest.mark.parametrize("target, grad_shape", SHAPES)
def test_fused_chain_equals_the_four_ops(dtype, target, grad_shape):
    rng = np.random.default_rng(len(target) + len(grad_shape))
    g = tf.placeholder(dtype, None)
    x = tf.placeholder(dtype, None)
    out = unbroadcast(g, x, g)  # unknown ranks: the run-time chain
    g_value = (rng.standard_normal(grad_shape) * 100).astype(dtype)
    ops = _compare(out, {g: g_value, x: np.zeros(target, dtype)})
    assert ops["_SumToShape"] == 1
    assert not ops["BroadcastGradientArgs"] and not ops["Sum"] and not ops["Reshape"]
    assert ops["Shape"] == 1  # the target's; the gradient's went


def test_gradients_with_an_unknown_batch_fuse_in_a_while_loop_and_equal_unfused():
    """The lstm_sequence example's pattern: h * alive with h [?, 8] and alive [?, 1], in a loop's backward pass."""
    x = tf.placeholder(tf.float32, [None, 5, 3])
    lengths = tf.placeholder(tf.int32, [None])
    w = tf.Variable(np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32))
    h0 = tf.zeros(tf.stack([tf.shape(x)[0], 8]))

    def body(t, h):
        alive = tf.expand_dims(tf.cast(tf.less(t, lengths), tf.float32), 1)
        new_h = tf.tanh(tf.matmul(x[:, t, :], w) + h)
        return t + 1, new_h * alive + h * (1.0 - alive)

    _, h = tf.while_loop(lambda t, h: t < 5, body, [tf.constant(0), h0])
    loss = tf.reduce_sum(h * h)
    grads = tf.gradients(loss, [w, x])
    feed = {x: np.random.default_rng(2).standard_normal((4, 5, 3)).astype(np.float32), lengths: [5, 3, 1, 4]}
    with tf.Session() as s:
        s.run(w.initializer)
        fused = s.run(grads, feed)
    with tf.Session(config=_config([PASS])) as s:
        s.run(w.initializer)
        plain = s.run(grads, feed)
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(a, b)
    assert any(op.type == "BroadcastGradientArgs" for op in tf.get_default_graph().get_operations())
    with tf.Session() as s:
        s.run(w.initializer)
        meta = tf.RunMetadata()
        s.run(grads, feed, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    ops = collections.Counter(n.op for g in meta.partition_graphs for n in g.node)
    assert ops["_SumToShape"] >= 4 and not ops["BroadcastGradientArgs"]


def test_gradients_of_a_product_fuse_on_both_sides():
    a = tf.placeholder(tf.float32, None)
    b = tf.placeholder(tf.float32, None)
    grads = tf.gradients(tf.reduce_sum(a * b), [a, b])
    ops = _compare(grads, {a: np.arange(6, dtype=np.float32).reshape(2, 3), b: np.float32([[2.0], [3.0]])})
    plain = _run(grads, {a: np.ones((2, 3), np.float32), b: np.ones((2, 1), np.float32)}, disabled=[PASS])[1]
    assert ops["_SumToShape"] == 2 and not ops["BroadcastGradientArgs"]
    assert (plain - ops) == collections.Counter({"BroadcastGradientArgs": 2, "Sum": 2, "Reshape": 2, "Shape": 2})


def test_a_shape_node_two_chains_share_goes_with_the_second():
    g = tf.placeholder(tf.float32, None)
    x = tf.placeholder(tf.float32, None)
    y = tf.placeholder(tf.float32, None)
    outs = [unbroadcast(g, x, g), unbroadcast(g, y, g)]  # one Shape(g) after common subexpressions merge
    feed = {g: np.arange(12, dtype=np.float32).reshape(4, 3), x: np.zeros((4, 1), np.float32),
            y: np.zeros((3,), np.float32)}
    ops = _compare(outs, feed)
    assert ops["_SumToShape"] == 2 and ops["Shape"] == 2  # the targets'


def test_parts_read_elsewhere_keep_their_chain_whole():
    g = tf.placeholder(tf.float32, None)
    x = tf.placeholder(tf.float32, None)
    target = tf.shape(x)
    axes, _ = broadcast_gradient_args(target, tf.shape(g))
    summed = tf.reduce_sum(g, axes)
    out = tf.reshape(summed, target)
    feed = {g: np.ones((4, 3), np.float32), x: np.zeros((1, 3), np.float32)}
    ops = _compare([out, summed], feed)  # the Sum is fetched
    assert ops["_SumToShape"] == 0 and ops["BroadcastGradientArgs"] == 1
    ops = _compare([out, axes], feed)  # the axes are fetched: the Sum and Reshape fuse, BroadcastGradientArgs stays
    assert ops["_SumToShape"] == 1 and ops["BroadcastGradientArgs"] == 1


def test_either_output_of_broadcast_gradient_args_matches():
    g = tf.placeholder(tf.float32, None)
    x = tf.placeholder(tf.float32, None)
    _, axes = broadcast_gradient_args(tf.shape(g), tf.shape(x))
    out = tf.reshape(tf.reduce_sum(g, axes), tf.shape(x))
    ops = _compare(out, {g: np.ones((2, 4, 3), np.float32), x: np.zeros((4, 1), np.float32)})
    assert ops["_SumToShape"] == 1


def test_a_chain_over_another_tensors_shape_is_left_alone():
    """TF's own gradients take BroadcastGradientArgs(Shape(x), Shape(y)): the gradient's shape is not an input."""
    g = tf.placeholder(tf.float32, None)
    x = tf.placeholder(tf.float32, None)
    y = tf.placeholder(tf.float32, None)
    axes, _ = broadcast_gradient_args(tf.shape(x), tf.shape(y))
    out = tf.reshape(tf.reduce_sum(g, axes), tf.shape(x))
    feed = {g: np.ones((2, 3), np.float32), x: np.zeros((1, 3), np.float32), y: np.zeros((2, 3), np.float32)}
    assert _compare(out, feed)["_SumToShape"] == 0


@pytest.mark.parametrize("disabled", [[PASS], []])
def test_incompatible_shapes_fail_alike(disabled):
    g = tf.placeholder(tf.float32, None)
    x = tf.placeholder(tf.float32, None)
    out = unbroadcast(g, x, g)
    with tf.Session(config=_config(disabled)) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[5, 2\] vs. \[4, 3\]"):
            s.run(out, {g: np.ones((4, 3), np.float32), x: np.zeros((5, 2), np.float32)})


def test_the_pass_switches_off_with_the_optimizations():
    g = tf.placeholder(tf.float32, None)
    x = tf.placeholder(tf.float32, None)
    out = unbroadcast(g, x, g)
    feed = {g: np.ones((4, 3), np.float32), x: np.zeros((4, 1), np.float32)}
    config = tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
    meta = tf.RunMetadata()
    with tf.Session(config=config) as s:
        value = s.run(out, feed, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    assert not any(n.op == "_SumToShape" for g_ in meta.partition_graphs for n in g_.node)
    np.testing.assert_array_equal(value, np.full((4, 1), 3.0, np.float32))


@pytest.mark.parametrize("reverse", [False, True])
def test_a_chain_reading_another_fuses_in_either_order_of_the_plans_nodes(reverse):
    """The pass walks the nodes as the plan lists them; a chain whose gradient is another chain's result must
    read that chain's fused node whichever comes first."""
    from tensorweave.runtime.passes import run_pass
    from tensorweave.runtime.prune import build_plan_graph

    g = tf.placeholder(tf.float32, None)
    x = tf.placeholder(tf.float32, None)
    y = tf.placeholder(tf.float32, None)
    out = tf.identity(unbroadcast(unbroadcast(g, x, g), y, x), name="out")  # the outer's gradient: the inner's Reshape
    graph, _, _ = build_plan_graph([out], [], [g, x, y])
    if reverse:
        graph.nodes.reverse()
    assert run_pass(PASS, graph) == 2
    present = {id(n) for n in graph.nodes}
    assert all(id(src) in present for n in graph.nodes for src, _ in n.inputs)  # no edge from a removed node
    (outer,) = [n for n in graph.nodes if n.op_type == "_SumToShape" and n.inputs[0][0].op_type == "_SumToShape"]
    assert outer.inputs[0][0] in graph.nodes
    feed = {g: np.arange(24, dtype=np.float32).reshape(2, 3, 4), x: np.zeros((3, 1), np.float32),
            y: np.zeros((1,), np.float32)}
    assert _compare(out, feed)["_SumToShape"] == 2
