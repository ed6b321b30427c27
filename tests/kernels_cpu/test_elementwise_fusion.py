"""Elementwise fusion: fused graphs compute exactly what the unfused graph computes (values, dtypes, NaN and
inf, integer division), over many expressions, dtypes and broadcasts; fetched or shared intermediates stay
out of a fused node; devices, frames and control edges are respected; errors name the user's op."""

import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.attr_value import from_attr_value
from tensorweave.framework.graph_io import GraphDef


def _attr(node, key):
    """The Python value of a GraphDef node's attr."""
    return from_attr_value(node.attr[key])

# NaN and inf inputs warn alike fused or not
pytestmark = [pytest.mark.cpu_only, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

UNFUSED = tf.OptimizerOptions(do_elementwise_fusion=False, do_memory_planning=False)


def _config(options=None, **kw):
    return tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options or tf.OptimizerOptions()), **kw)


def _run(config, fetches, feed, steps=2):
    """The values of the last of ``steps`` runs, and the partition graphs."""
    meta = tf.RunMetadata()
    with tf.Session(config=config) as s:
        for _ in range(steps - 1):
            s.run(fetches, feed)
        out = s.run(fetches, feed, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    return out, meta.partition_graphs


def _fused_nodes(graphs):
    return [n for g in graphs for n in g.node if n.op == "_FusedElementwise"]


def _assert_identical(fused, unfused):
    for a, b in zip(np.atleast_1d(fused) if not isinstance(fused, list) else fused,
                    np.atleast_1d(unfused) if not isinstance(unfused, list) else unfused):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)  # bit for bit, NaN where NaN


def _compare(fetches, feed, min_fused_ops=2, **config_kw):
    """Runs fused and unfused; asserts identical results and returns the fused nodes."""
    fused, graphs = _run(_config(**config_kw), fetches, feed)
    unfused, plain = _run(_config(UNFUSED, **config_kw), fetches, feed)
    _assert_identical(fused, unfused)
    assert not _fused_nodes(plain)
    nodes = _fused_nodes(graphs)
    assert sum(len(_attr(n, "fused_ops")) for n in nodes) >= min_fused_ops
    return nodes


LARGE_ROWS = 500  # 5,000 elements: the fused kernel writes into dying temporaries from 4,096 on
SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, 3e38, -7.0, np.inf, -np.inf, np.nan, 0.5])

EXPRESSIONS = {
    "tanh-sigmoid": lambda x, y: tf.tanh(x * y + 1.0) - tf.sigmoid(x),
    "relu-square": lambda x, y: tf.nn.relu(x - y) * 2.0 + tf.square(y),
    "sqrt-log-exp": lambda x, y: tf.sqrt(x) + tf.log(x * y) - tf.exp(y),
    "rsqrt-divide": lambda x, y: tf.rsqrt(tf.abs(x) + 0.5) / (y - 1.5),
    "max-min-sign": lambda x, y: tf.maximum(x, y) * tf.minimum(x, 0.0) + tf.sign(x),
    "pow-floor-ceil": lambda x, y: tf.pow(tf.abs(x), y) - tf.floor(x) + tf.ceil(y),
    "select": lambda x, y: tf.where(x > 0.0, x * 2.0, -x) + y,
    "where-v2": lambda x, y: tf.where_v2(x > y, x - y, y * 0.5) * 3.0,
    "clip-round": lambda x, y: tf.clip_by_value(x * y, -1.0, 1.0) + tf.round(x),
    "mask-cast": lambda x, y: tf.cast(tf.logical_and(x > 0.0, y < 1.0), x.dtype) * x - 1.0,
    "softplus-softsign": lambda x, y: tf.nn.softplus(x) - tf.nn.softsign(y),
    "elu-relu6-leaky": lambda x, y: tf.nn.elu(x) + tf.nn.relu6(y) * tf.nn.leaky_relu(x, 0.2),
    "sqdiff-reciprocal": lambda x, y: tf.squared_difference(x, y) + tf.reciprocal(y) - tf.div_no_nan(x, y),
    "expm1-log1p-trig": lambda x, y: tf.expm1(x) * tf.log1p(y) + tf.sin(x) - tf.cos(y),
    "predicates": lambda x, y: tf.cast(tf.logical_or(tf.is_nan(x), tf.logical_not(tf.is_finite(y))), x.dtype) + x,
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
@pytest.mark.parametrize("dtype, rows", [(tf.float32, 3), (tf.float64, 3), (tf.float32, LARGE_ROWS)])
def test_fused_expressions_equal_unfused_with_broadcasting_nan_and_inf(name, dtype, rows):
    x = tf.placeholder(dtype, [None, 10])
    y = tf.placeholder(dtype, [10])
    value = np.stack([SPECIAL, SPECIAL[::-1], np.linspace(-3, 3, 10)])
    feed = {x: np.resize(value, (rows, 10)).astype(dtype.as_numpy_dtype),
            y: np.linspace(-2, 2, 10).astype(dtype.as_numpy_dtype)}
    _compare(EXPRESSIONS[name](x, y), feed)


@pytest.mark.parametrize("dtype", [tf.float16, tf.complex64])
def test_half_and_complex_expressions_equal_unfused(dtype):
    x = tf.placeholder(dtype, [3, 4])
    value = np.linspace(-2, 2, 12).reshape(3, 4)
    if dtype == tf.complex64:
        value = value + 1j * value[::-1]
        out = tf.sigmoid(x) * tf.conj(x) + tf.tanh(x) - 1.0  # complex Sigmoid takes its own kernel's formula
    else:
        out = tf.tanh(x * 2.0 + 1.0) - tf.sigmoid(x) * tf.exp(x)
    _compare(out, {x: value.astype(dtype.as_numpy_dtype)})


def _formula_case(op_type, dtype, rows):
    """``op_type`` applied to placeholders of ``dtype`` (bool for logical ops), followed by one more op."""
    from tensorweave.extension import apply_op
    from tensorweave_cpu.kernels.fused import FORMULAS
    from tensorweave.framework.apply_op import get_op_def
    arity = max(o for call in FORMULAS[op_type] for o in call[1:] if type(o) is int) + 1
    allowed = getattr(get_op_def(op_type).attrs.get("T"), "allowed", None)
    in_dtype = tf.bool if op_type.startswith("Logical") else dtype
    if allowed is not None and in_dtype not in allowed:
        in_dtype = dtype = tf.complex64  # Conj
    inputs = [tf.placeholder(in_dtype, [None, 10]) for _ in range(arity)]
    rng = np.random.default_rng(len(op_type))
    values = [np.resize(np.stack([np.roll(SPECIAL, 3 * k), rng.uniform(-3, 3, 10)]), (rows, 10)) for k in range(arity)]
    feed = {t: (v > 0 if in_dtype == tf.bool else (v + 0.5j * v[::-1] if dtype.is_complex else v).astype(
        dtype.as_numpy_dtype)) for t, v in zip(inputs, values)}
    y = apply_op(op_type, inputs)
    return (tf.logical_not(y) if y.dtype == tf.bool else y * 1.5), feed


@pytest.mark.parametrize("dtype, rows", [(tf.float16, 2), (tf.float16, LARGE_ROWS), (tf.float32, LARGE_ROWS)])
def test_every_formula_equals_its_ops_own_kernel(dtype, rows):
    """float16 has no native kernels: every formula runs; float32 takes the native ones where they exist."""
    from tensorweave_cpu.kernels.fused import FORMULAS
    for op_type in sorted(FORMULAS):
        out, feed = _formula_case(op_type, dtype, rows)
        _compare(out, feed)


def test_activation_gradients_fuse_and_equal_unfused():
    x = tf.placeholder(tf.float32, [4, 6])
    y = tf.placeholder(tf.float32, [6])
    loss = tf.reduce_sum(tf.tanh(x * y) * tf.sigmoid(x) + tf.nn.relu(x) * tf.sqrt(tf.abs(y) + 1.0)
                         + tf.rsqrt(tf.abs(x) + 1.0) + tf.nn.relu6(x * 4.0))
    grads = tf.gradients(loss, [x, y])
    feed = {x: np.linspace(-7, 7, 24).reshape(4, 6).astype(np.float32), y: np.linspace(-1, 2, 6).astype(np.float32)}
    nodes = _compare(grads, feed, min_fused_ops=6)
    fused = collections.Counter(op for n in nodes for op in _attr(n, "fused_ops"))
    assert {"TanhGrad", "SigmoidGrad", "ReluGrad", "Relu6Grad", "RsqrtGrad", "SqrtGrad"} <= set(fused)


def test_integer_division_and_modulo_keep_their_semantics():
    a = tf.placeholder(tf.int32, [None])
    b = tf.placeholder(tf.int32, [None])
    out = (a // b) * b + tf.floormod(a, b) - tf.truncatediv(a, b) * 3 + tf.truncatemod(a, b)
    feed = {a: np.array([7, -7, 7, -7, 0, 9], np.int32), b: np.array([2, 2, -2, -2, 5, -4], np.int32)}
    _compare(out, feed)


def test_casts_between_dtypes_in_one_tree():
    x = tf.placeholder(tf.float32, [5])
    out = tf.cast(tf.cast(x * 2.5, tf.int32) // 2, tf.float64) * 0.5 + tf.cast(x, tf.float64)
    _compare(out, {x: np.array([-3.7, -0.2, 0.0, 1.9, 12.6], np.float32)})


def test_bias_add_and_add_n_join_trees():
    x = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [3])
    out = tf.add_n([tf.nn.bias_add(x * 2.0, b), x, tf.nn.relu(x)]) - 1.0
    nodes = _compare(out, {x: np.arange(12, dtype=np.float32).reshape(4, 3) - 5, b: np.float32([1, -1, 2])})
    assert {"BiasAdd", "AddN"} <= {op for n in nodes for op in _attr(n, "fused_ops")}


def test_one_fused_node_per_tree_named_after_its_root_with_the_original_ops():
    x = tf.placeholder(tf.float32, [4], name="x")
    a = tf.multiply(x, 2.0, name="double")
    b = tf.tanh(a, name="squash")
    out = tf.add(b, x, name="result")
    (node,) = _compare(out, {x: np.arange(4, dtype=np.float32)})
    assert node.name == "result"
    assert _attr(node, "fused_ops") == ["Mul", "Tanh", "Add"]
    assert _attr(node, "fused_names") == ["double", "squash", "result"]


def test_fetched_and_shared_intermediates_stay_out_of_fused_nodes():
    x = tf.placeholder(tf.float32, [4])
    fetched = tf.exp(x * 3.0, name="fetched")
    shared = tf.square(x, name="shared")
    out = tf.tanh(fetched + 1.0) + shared
    other = tf.reduce_sum(shared)
    nodes = _compare([out, fetched, other], {x: np.linspace(-1, 1, 4).astype(np.float32)})
    names = {name for n in nodes for name in _attr(n, "fused_names")}
    assert "fetched" in {n.name for n in nodes}  # its own tree's root, still there to be fetched
    assert "shared" not in names  # read by Sum as well: not a private intermediate


def test_control_edges_keep_their_order():
    v = tf.Variable(1.0)
    x = tf.placeholder(tf.float32, [])
    bump = tf.assign_add(v, 10.0)
    with tf.control_dependencies([bump]):
        a = tf.multiply(x, 2.0)
    out = tf.add(a, 1.0) * v.read_value()
    after = tf.identity(out)
    with tf.Session() as s:
        s.run(v.initializer)
        assert s.run(after, {x: 3.0}) == pytest.approx(7.0 * 11.0)
        assert s.run(v) == 11.0


def test_ops_on_different_devices_are_not_fused_together():
    x = tf.placeholder(tf.float32, [6])
    with tf.device("/cpu:0"):
        a = tf.tanh(x * 2.0)
    with tf.device("/cpu:1"):
        b = tf.exp(a - 1.0) * 3.0
    feed = {x: np.linspace(-1, 1, 6).astype(np.float32)}
    nodes = _compare(b, feed, device_count={"CPU": 2})
    assert sorted(_attr(n, "fused_ops") for n in nodes) == [["Mul", "Tanh"], ["Sub", "Exp", "Mul"]]
    assert sorted(n.device.rsplit(":", 1)[-1] for n in nodes) == ["0", "1"]


def test_while_loop_and_cond_frames_keep_their_control_flow_ops():
    x = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.bool, [])

    def body(i, acc):
        return i + 1, tf.tanh(acc * 0.5 + 1.0) - tf.sigmoid(acc)

    _, looped = tf.while_loop(lambda i, acc: i < 5, body, [tf.constant(0), x])
    branched = tf.cond(p, lambda: tf.exp(looped * 2.0) + 1.0, lambda: tf.abs(looped) - 3.0)
    feed = {x: np.float32([-1, 0.5, 2]), p: True}
    fused, graphs = _run(_config(), branched, feed)
    unfused, plain = _run(_config(UNFUSED), branched, feed)
    _assert_identical(fused, unfused)
    flow = ("Enter", "Merge", "Switch", "Exit", "NextIteration", "LoopCond")
    count = lambda gs: collections.Counter(n.op for g in gs for n in g.node if n.op in flow)  # noqa: E731
    assert count(graphs) == count(plain)
    assert len(_fused_nodes(graphs)) >= 2
    feed[p] = False
    _assert_identical(_run(_config(), branched, feed)[0], _run(_config(UNFUSED), branched, feed)[0])


def test_an_error_names_the_original_op_and_line():
    a = tf.placeholder(tf.int32, [3])
    b = tf.placeholder(tf.int32, [3])
    quotient = tf.floordiv(a * 2, b - 1, name="the_division")
    out = quotient + 1
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            s.run(out, {a: [1, 2, 3], b: [2, 1, 3]})
    message = str(info.value)
    assert "'the_division' (FloorDiv)" in message and "division by zero" in message
    assert "test_elementwise_fusion.py" in message and "elementwise_fusion" in message


def test_nodes_with_one_formula_share_a_compilation_and_errors_still_name_their_own_op():
    a = tf.placeholder(tf.int32, [3])
    b = tf.placeholder(tf.int32, [3])
    first = tf.floordiv(a * 2, b - 1, name="first_division") + 1
    second = tf.floordiv(a * 2, b - 1, name="second_division") + 1
    with tf.Session(config=tf.ConfigProto(graph_options=tf.GraphOptions(disable_passes=["cse"]))) as s:
        plan = s._get_plan([first, second], [], [a, b])
        fused = [compute for _, executor in plan.partitions for _, compute in executor.kernels.values()
                 if getattr(compute, "source", None)]
        assert len(fused) == 2 and fused[0].source == fused[1].source
        assert fused[0].__code__.co_code == fused[1].__code__.co_code
        assert {f.__code__.co_filename.split(":")[-1] for f in fused} == {"add>", "add_1>"}  # each its own node's
        np.testing.assert_array_equal(s.run([first, second], {a: [1, 2, 3], b: [2, 3, 4]}), [[3, 3, 3]] * 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="'second_division' \\(FloorDiv\\)"):
            s.run(second, {a: [1, 2, 3], b: [2, 1, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="'first_division' \\(FloorDiv\\)"):
            s.run(first, {a: [1, 2, 3], b: [2, 1, 3]})


def test_a_shape_error_inside_a_fused_node_names_the_op():
    x = tf.placeholder(tf.float32, [None])
    y = tf.placeholder(tf.float32, [None])
    out = tf.tanh(tf.add(x, y, name="mismatched")) * 2.0
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="'mismatched' \\(Add\\)"):
            s.run(out, {x: np.ones(3, np.float32), y: np.ones(4, np.float32)})


@pytest.mark.parametrize("options, graph_kw", [
    (UNFUSED, {}),
    (tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0), {}),
    (tf.OptimizerOptions(), {"disable_passes": ["elementwise_fusion"]}),
])
def test_fusion_switches_off(options, graph_kw):
    x = tf.placeholder(tf.float32, [3])
    out = tf.tanh(x * 2.0) + 1.0
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options, **graph_kw))
    values, graphs = _run(config, out, {x: np.ones(3, np.float32)})
    assert not _fused_nodes(graphs)
    np.testing.assert_allclose(values, np.tanh(2.0) + 1.0, rtol=1e-6)


def test_fused_nodes_round_trip_through_graph_defs_and_traces():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    out = tf.sigmoid(tf.nn.relu(x * 3.0 - 1.0) + 0.5, name="out")
    feed = {x: np.float32([[0.1, 2.0], [-1.0, 0.4]])}
    meta = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session() as s:
        expected = s.run(out, feed, options=options, run_metadata=meta)
    traced = [ns for d in meta.step_stats.dev_stats for ns in d.node_stats if ns.op_type == "_FusedElementwise"]
    assert [ns.node_name for ns in traced] == ["out"]
    (part,) = meta.partition_graphs
    parsed = GraphDef.FromString(part.SerializeToString())
    (node,) = [n for n in parsed.node if n.op == "_FusedElementwise"]
    assert list(node.attr["fused_ops"].list.s) == [b"Mul", b"Sub", b"Relu", b"Add", b"Sigmoid"]
    by_name = {n.name: n for n in parsed.node}
    inputs = [by_name[ref.split(":")[0]] for ref in node.input]
    with tf.Graph().as_default():
        values = [tf.placeholder(tf.float32, [None, 2]) if n.op == "_Arg" else
                  tf.constant(tf.make_ndarray(n.attr["value"].tensor)) for n in inputs]
        (imported,) = tf.import_graph_def(GraphDef(node=[node]),
                                          input_map={ref: t for ref, t in zip(node.input, values)},
                                          return_elements=["out:0"], name="")
        assert imported.shape.as_list() == [None, 2]
        with tf.Session() as s:
            again = s.run(imported, {values[[n.op for n in inputs].index("_Arg")]: feed[x]})
    _assert_identical(again, expected)


def test_the_cost_model_counts_every_fused_op():
    from tensorweave.runtime.passes import run_pass
    from tensorweave.runtime.prune import build_plan_graph
    x = tf.placeholder(tf.float32, [1000, 1000])
    out = tf.tanh(tf.exp(x * 2.0) + 1.0) - x
    graph, _, _ = build_plan_graph([out], [], [x])
    assert run_pass("elementwise_fusion", graph) == 5
    (fused,) = [n for n in graph.nodes if n.op_type == "_FusedElementwise"]
    assert fused.op_def.flops_fn(fused) == 5 * 1000 * 1000


def test_formula_only_nodes_share_one_build_and_errors_still_name_their_own_op():
    x = tf.placeholder(tf.float32, [None])
    y1 = tf.placeholder(tf.float32, [None])
    y2 = tf.placeholder(tf.float32, [None])
    first = tf.tanh(tf.add(x, y1, name="first_add")) * 2.0
    second = tf.tanh(tf.add(x, y2, name="second_add")) * 2.0
    ones, four = np.ones(3, np.float32), np.ones(4, np.float32)
    with tf.Session(config=tf.ConfigProto(graph_options=tf.GraphOptions(disable_passes=["cse"]))) as s:
        plan = s._get_plan([first, second], [], [x, y1, y2])
        fused = [compute for _, executor in plan.partitions for _, compute in executor.kernels.values()
                 if getattr(compute, "source", None)]
        assert len(fused) == 2 and fused[0].source == fused[1].source
        assert fused[0].__globals__ is not fused[1].__globals__  # one build, each node its own error locator
        np.testing.assert_allclose(s.run([first, second], {x: ones, y1: ones, y2: ones}), [np.tanh([2.0] * 3) * 2] * 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="'second_add' \\(Add\\)"):
            s.run([first, second], {x: ones, y1: ones, y2: four})
        with pytest.raises(tf.errors.InvalidArgumentError, match="'first_add' \\(Add\\)"):
            s.run([first, second], {x: ones, y1: four, y2: ones})


def test_a_lone_op_known_to_be_large_gets_a_fused_node_of_its_own_only_with_memory_planning():
    """Its fused kernel accepts out=, so it may write over a dying input; small or unknown sizes stay plain."""
    x = tf.placeholder(tf.float32, [64, 256])  # 64 KiB
    w = tf.constant(np.eye(256, dtype=np.float32) * 0.5)
    large = tf.add(tf.matmul(x, w), x, name="large")
    small = tf.add(tf.matmul(x[:4], w), 1.0, name="small")
    unknown = tf.add(tf.matmul(tf.placeholder_with_default(x, [None, 256]), w), 1.0, name="unknown")
    feed = {x: np.linspace(-1, 1, 64 * 256, dtype=np.float32).reshape(64, 256)}
    planned, graphs = _run(_config(), [large, small, unknown], feed)
    unplanned, plain = _run(_config(tf.OptimizerOptions(do_memory_planning=False)), [large, small, unknown], feed)
    _assert_identical(planned, unplanned)
    assert [(n.name, _attr(n, "fused_ops")) for n in _fused_nodes(graphs)] == [("large", ["Add"])]
    assert not _fused_nodes(plain)
