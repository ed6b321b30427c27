"""Graph passes: common subexpressions, constant folding and needless identities, each alone and
together, the options that switch them, the graphs before and after, and a third-party pass."""

import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import plugins
from tensorweave.extension import hookimpl
from tensorweave.framework.attr_value import from_attr_value
from tensorweave.runtime.passes import run_pass
from tensorweave.runtime.passes.rules import is_pure
from tensorweave.runtime.prune import build_plan_graph


def _attr(node, key):
    """The Python value of a GraphDef node's attr."""
    return from_attr_value(node.attr[key])


def _plan(fetches, feeds=(), targets=()):
    graph, _, _ = build_plan_graph(list(fetches), list(targets), list(feeds))
    return graph


def _types(graph):
    return collections.Counter(n.op_type for n in graph.nodes)


def _post_graph(sess, fetches, feed_dict=None):
    meta = tf.RunMetadata()
    out = sess.run(fetches, feed_dict, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    (graphs,) = meta.function_graphs
    return out, graphs


# ---- common subexpression elimination -------------------------------------------------------------
def test_cse_merges_equal_pure_nodes_including_commuted_inputs():
    x = tf.placeholder(tf.float32, [2])
    y = tf.placeholder(tf.float32, [2])
    total = tf.add_n([tf.add(x, y), tf.add(x, y), tf.add(y, x), tf.multiply(x, y)])
    graph = _plan([total], [x, y])
    assert _types(graph)["Add"] == 3
    assert run_pass("cse", graph) == 2
    assert _types(graph)["Add"] == 1 and _types(graph)["Mul"] == 1
    add_n = next(n for n in graph.nodes if n.op_type == "AddN")
    assert len({id(src) for src, _ in add_n.inputs}) == 2  # three inputs now read one Add
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(total, {x: [1, 2], y: [3, 4]}), [3 * 4 + 3, 3 * 6 + 8])


def test_cse_keeps_stateful_reads_devices_and_control_dependencies_apart():
    v = tf.Variable(1.0, use_resource=True)
    first, second = v.read_value(), v.read_value()
    x = tf.placeholder(tf.float32, [])
    with tf.device("/cpu:1"):
        elsewhere = tf.add(x, 1.0)
    plain = tf.add(x, 1.0)
    with tf.control_dependencies([first]):
        ordered = tf.add(x, 1.0)
    graph = _plan([first, second, elsewhere, plain, ordered], [x])
    reads = _types(graph)["ReadVariableOp"]
    run_pass("cse", graph)
    assert _types(graph)["ReadVariableOp"] == reads  # stateful: never merged
    assert _types(graph)["Add"] == 3  # another device request, another control input


def test_random_ops_are_neither_merged_nor_folded():
    a, b = tf.random_uniform([4]), tf.random_uniform([4])
    with tf.Session() as s:
        (va, vb), graphs = _post_graph(s, [a, b])
    assert not np.array_equal(va, vb)
    post = collections.Counter(n.op for n in graphs.post_optimization_graph.node)
    assert post[a.op.type] == 2


def test_random_ops_are_never_pure():
    """A draw is stateful in its definition (as in TF), which is what keeps passes off it: no list of names."""
    from tensorweave.ops import random_ops
    assert {d.name for d in random_ops.DEFS} >= {"RandomUniform", "RandomStandardNormal", "TruncatedNormal",
                                                  "Multinomial"}
    assert all(d.is_stateful for d in random_ops.DEFS)
    graph = _plan([tf.random_uniform([4]), tf.truncated_normal([2]), tf.multinomial([[0.0, 1.0]], 3)])
    draws = [n for n in graph.nodes if n.op_def in random_ops.DEFS]
    assert len(draws) == 3 and not any(is_pure(n) for n in draws)


# ---- constant folding ---------------------------------------------------------------------------------
def test_folding_replaces_a_constant_subgraph_with_its_value():
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    x = tf.placeholder(tf.float32, [2])
    y = tf.add(x, tf.reduce_sum(tf.multiply(a, b)) * 2.0)
    graph = _plan([y], [x])
    assert run_pass("constant_folding", graph) == 3  # Mul, Sum, the scaling Mul
    types = _types(graph)
    assert types["Mul"] == 0 and types["Sum"] == 0 and types["Add"] == 1
    (folded,) = [n for n in graph.nodes if n.name.startswith("ConstantFolding/")]
    assert folded.attrs["value"] == pytest.approx(22.0) and folded.attrs["dtype"] == tf.float32
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(y, {x: [0.0, 1.0]}), [22.0, 23.0])


def test_folding_respects_the_size_limit_and_state():
    big = tf.multiply(tf.constant(np.ones(1000, np.float32)), 2.0)  # 4000 bytes
    small = tf.reduce_sum(tf.constant([1.0, 2.0]))
    v = tf.Variable(3.0, use_resource=True)
    stateful = tf.multiply(v.read_value(), 2.0)
    config = tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(max_folded_constant_in_bytes=1000)))
    graph = _plan([big, small, stateful])
    assert run_pass("constant_folding", graph, config=config) == 1
    assert {n.op_type for n in graph.nodes} >= {"Mul", "ReadVariableOp"}
    assert "Sum" not in _types(graph)


def test_folding_never_computes_what_its_static_shape_says_is_too_big():
    import tracemalloc
    y = tf.reduce_sum(tf.zeros([4000, 4000]))  # 64 MB, over the 10 MB default limit
    graph = _plan([y])
    tracemalloc.start()
    try:
        assert run_pass("constant_folding", graph) == 0
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_folded_constants_keep_device_requests_and_control_inputs():
    a = tf.constant(2.0)
    gate = tf.placeholder(tf.float32, [])
    with tf.device("/cpu:1"):
        with tf.control_dependencies([gate]):
            c = tf.constant(3.0)
        product = tf.multiply(a, c)
    y = tf.add(product, gate)
    graph = _plan([y], [gate])
    run_pass("constant_folding", graph)
    (folded,) = [n for n in graph.nodes if n.name.startswith("ConstantFolding/")]
    assert folded.requested_device == "/device:CPU:1"
    assert [c.op_type for c in folded.control_inputs] == ["_Arg"]  # still waits for the fed gate
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        assert s.run(y, {gate: 1.0}) == 7.0


def test_folding_stops_at_control_flow_and_stays_in_loop_frames():
    p = tf.placeholder(tf.bool, [])
    branch = tf.cond(p, lambda: tf.multiply(tf.constant(2.0), 3.0), lambda: tf.add(tf.constant(1.0), 1.0))
    loop = tf.while_loop(lambda i, acc: i < 4, lambda i, acc: (i + 1, acc + tf.multiply(tf.constant(2.0), 5.0)),
                         [tf.constant(0), tf.constant(0.0)])[1]
    graph = _plan([branch, loop], [p])
    switches, merges = _types(graph)["Switch"], _types(graph)["Merge"]
    assert run_pass("constant_folding", graph) >= 3
    assert _types(graph)["Switch"] == switches and _types(graph)["Merge"] == merges
    for node in graph.nodes:
        if node.name.startswith("ConstantFolding/"):
            assert node.control_inputs, node.name  # the branch's or the loop's pivot keeps it in its frame
    with tf.Session() as s:
        assert s.run([branch, loop], {p: True}) == [6.0, 40.0]
        assert s.run(branch, {p: False}) == 2.0


# ---- needless identities -----------------------------------------------------------------------------
def test_needless_identities_go_and_meaningful_ones_stay():
    x = tf.placeholder(tf.float32, [])
    chained = tf.add(tf.identity(tf.identity(x)), 1.0)
    with tf.control_dependencies([chained]):
        ordered = tf.identity(x, name="ordered")
    with tf.device("/cpu:1"):
        moved = tf.identity(chained, name="moved")
    fetched = tf.identity(chained, name="fetched")
    graph = _plan([tf.add(ordered, moved), fetched], [x])
    assert run_pass("identity_removal", graph) == 2
    kept = {n.name for n in graph.nodes if n.op_type == "Identity"}
    assert kept == {"ordered", "moved", "fetched"}
    add = next(n for n in graph.nodes if n.name == chained.op.name)
    assert add.inputs[0][0].op_type == "_Arg"


def test_cond_pivots_survive_identity_removal():
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [])
    out = tf.cond(p, lambda: tf.identity(x) * 2.0, lambda: tf.constant(-1.0))
    graph = _plan([out], [p, x])
    before = _types(graph)["Identity"]
    run_pass("identity_removal", graph)
    assert _types(graph)["Identity"] >= before - 1  # only the branch's own identity of x may go
    with tf.Session() as s:
        assert s.run(out, {p: True, x: 4.0}) == 8.0 and s.run(out, {p: False, x: 4.0}) == -1.0


# ---- together, options, inspection ----------------------------------------------------------------------
def _workload():
    x = tf.placeholder(tf.float32, [3])
    k = tf.multiply(tf.constant(2.0), tf.constant(3.0))
    y = tf.add(tf.identity(tf.multiply(x, k)), tf.multiply(x, k))
    return x, y


@pytest.mark.cpu_only  # elementwise fusion makes fused nodes for the CPU only
def test_all_passes_together_and_the_graphs_before_and_after():
    x, y = _workload()
    with tf.Session() as s:
        out, graphs = _post_graph(s, y, {x: [1.0, 2.0, 3.0]})
    np.testing.assert_allclose(out, [12.0, 24.0, 36.0])
    pre = collections.Counter(n.op for n in graphs.pre_optimization_graph.node)
    post = collections.Counter(n.op for n in graphs.post_optimization_graph.node)
    assert pre["Mul"] == 3 and pre["Identity"] == 1 and pre["Const"] == 2
    assert post["Mul"] == 0 and post["Identity"] == 0 and post["Const"] == 1 and post["_FusedElementwise"] == 1
    fused = [n for g in graphs.partition_graphs for n in g.node if n.op == "_FusedElementwise"]
    assert [_attr(n, "fused_ops") for n in fused] == [["Mul", "Add"]]  # the one Mul CSE left, fused with the Add


@pytest.mark.parametrize("options, muls, identities", [
    (tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0), 3, 0),
    (tf.OptimizerOptions(do_common_subexpression_elimination=False, do_elementwise_fusion=False), 2, 0),
    (tf.OptimizerOptions(do_constant_folding=False, do_elementwise_fusion=False), 2, 0),
])
def test_optimizer_options_switch_passes(options, muls, identities):
    x, y = _workload()
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options))
    with tf.Session(config=config) as s:
        out, graphs = _post_graph(s, y, {x: [1.0, 1.0, 1.0]})
    np.testing.assert_allclose(out, [12.0] * 3)
    post = collections.Counter(n.op for n in graphs.post_optimization_graph.node)
    assert post["Mul"] == muls
    if options.opt_level == tf.OptimizerOptions.L0:
        assert post["Identity"] == 1


def test_graph_options_disable_one_pass_by_name():
    x, y = _workload()
    config = tf.ConfigProto(graph_options=tf.GraphOptions(disable_passes=["identity_removal"]))
    with tf.Session(config=config) as s:
        _, graphs = _post_graph(s, y, {x: [1.0, 1.0, 1.0]})
    post = collections.Counter(n.op for n in graphs.post_optimization_graph.node)
    assert post["Identity"] == 1 and post["Mul"] == 1  # CSE merged the two products around it


def test_a_plugin_pass_runs_through_the_hook_with_the_session_context():
    seen = []

    class Counter:
        @hookimpl
        def tensorweave_register_graph_passes(self, registrar):
            registrar.add_pass("count_nodes", lambda graph, options: seen.append(
                (len(graph.nodes), [d.device_type for d in options.device_mgr.devices].count("CPU"),
                 options.optimizer_options.opt_level)), order=5)

    try:
        plugins.reload(extra_plugins=[(Counter(), "counter")])
        x, y = _workload()
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
            s.run(y, {x: [1.0, 1.0, 1.0]})
        assert seen == [(9, 2, 0)]
        assert "count_nodes" in {p.name: p for p in plugins.list_plugins()}["counter"].passes
    finally:
        plugins.reload()


def test_run_pass_names_the_registered_passes_when_asked_for_an_unknown_one():
    with pytest.raises(KeyError, match="cse.*constant_folding|constant_folding.*cse"):
        run_pass("no_such_pass", _plan([tf.constant(1.0)]))
