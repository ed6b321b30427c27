"""A plugin's op says on its OpDef what the runtime may do with it, and is then treated exactly as a core op with
the same fields: the example plugin's Swish is fused with core ops (``is_elementwise``) and seen through while
building (``constant_fn``); its Annotate is bypassed by identity removal, costed and memory-planned as Identity
(``is_pass_through``); gradients come from the definitions, and ``tf.RegisterGradient`` gives a plugin op
without one its gradient on its OpDef."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import plugins
from tensorweave.extension import (
    KernelSet, OpDef, OpDefList, apply_op, common_shapes, constant_value, constant_value_as_shape, hookimpl,
)
from tensorweave.ops import gradients_impl
from tensorweave.runtime.cost_model import PER_OP_SECONDS, CostModel
from tensorweave.runtime.device_mgr import DeviceMgr
from tensorweave.runtime.passes import run_pass
from tensorweave.runtime.prune import build_plan_graph

plugin = pytest.importorskip("tensorweave_example_plugin")


def _swish(x):
    return x / (1.0 + np.exp(-x))


def _plan(fetches, feeds):
    graph, _, _ = build_plan_graph(list(fetches), [], list(feeds))
    return graph


def _no_fusion():
    return tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(do_elementwise_fusion=False)))


def test_the_plugin_elementwise_op_is_fused_as_a_core_op_is():
    x = tf.placeholder(tf.float32, [None, 8])
    by_plugin = plugin.swish(x * 2.0 + 1.0) - x
    by_core = tf.nn.sigmoid(x * 2.0 + 1.0) - x
    for out, activation in ((by_plugin, "Swish"), (by_core, "Sigmoid")):
        graph = _plan([out], [x])
        assert run_pass("elementwise_fusion", graph) == 4
        assert [n.attrs["fused_ops"] for n in graph.nodes if n.op_type == "_FusedElementwise"] == [
            ["Mul", "Add", activation, "Sub"]]
    data = np.linspace(-3, 3, 4096 * 8, dtype=np.float32).reshape(4096, 8)
    with tf.Session() as s:
        fused = s.run(by_plugin, {x: data})
    with tf.Session(config=_no_fusion()) as s:
        unfused = s.run(by_plugin, {x: data})
    np.testing.assert_array_equal(fused, unfused)
    np.testing.assert_allclose(fused, _swish(data * 2 + 1) - data, rtol=1e-5, atol=1e-6)


def test_the_plugin_gradient_op_is_fused_with_the_core_gradient_ops():
    x = tf.placeholder(tf.float32, [None, 8])
    (grad,) = tf.gradients(tf.reduce_sum(plugin.swish(x * 3.0)), x)
    meta = tf.RunMetadata()
    data = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
    with tf.Session() as s:
        got = s.run(grad, {x: data}, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    fused = [list(n.attr["fused_ops"].list.s) for g in meta.partition_graphs for n in g.node
             if n.op == "_FusedElementwise"]
    assert [b"SwishGrad", b"Mul"] in fused
    sig = 1 / (1 + np.exp(-3 * data))
    np.testing.assert_allclose(got, 3 * (sig + 3 * data * sig * (1 - sig)), rtol=1e-5)


def test_shape_inference_sees_through_plugin_ops_as_through_core_ones():
    c = np.array([-1.0, 0.0, 2.0], np.float32)
    np.testing.assert_allclose(constant_value(plugin.swish(tf.constant(c))), _swish(c), rtol=1e-6)
    dims = tf.constant([2, 3])
    for through in (tf.identity, plugin.annotate):
        assert constant_value(through(dims)).tolist() == [2, 3]
        assert tf.zeros(through(dims)).shape.as_list() == [2, 3]
        x = tf.placeholder(tf.float32, [None, 6])
        assert tf.reshape(x, through(tf.constant([-1, 2, 3]))).shape.as_list() == [None, 2, 3]
    unknown = tf.placeholder(tf.int32, [2])
    assert constant_value(plugin.annotate(unknown)) is None
    assert constant_value_as_shape(plugin.annotate(unknown)).as_list() == [None, None]


def test_the_folding_pass_computes_a_plugin_op_of_constants_as_a_core_op():
    x = tf.placeholder(tf.float32, [3])
    c = tf.constant([-1.0, 0.0, 2.0])
    for f in (plugin.swish, tf.exp):
        y = f(c) + x
        graph = _plan([y], [x])
        assert run_pass("constant_folding", graph) == 1
        assert f(c).op.type not in {n.op_type for n in graph.nodes}
    y = plugin.swish(c) + x
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(y, {x: [1.0, 1.0, 1.0]}), _swish(np.array([-1.0, 0.0, 2.0])) + 1, rtol=1e-6)


def test_the_plugin_pass_through_op_is_removed_and_costed_as_identity():
    x = tf.placeholder(tf.float32, [3])
    host = DeviceMgr().host_device()
    for through, op_type in ((tf.identity, "Identity"), (plugin.annotate, "Annotate")):
        trigger = tf.no_op()
        with tf.control_dependencies([trigger]):
            ordered = through(x)  # a control input means an ordering: it stays
        graph = _plan([tf.square(through(x)), tf.square(ordered)], [x])
        nodes = [n for n in graph.nodes if n.op_type == op_type]
        assert len(nodes) == 2
        assert all(CostModel().compute_seconds(n, host) == PER_OP_SECONDS / 4 for n in nodes)
        assert run_pass("identity_removal", graph) == 1
        assert [n.control_inputs for n in graph.nodes if n.op_type == op_type] == [[
            next(n for n in graph.nodes if n.name == trigger.name)]]


def _planned(fetches, feeds):
    """What memory planning offered, by node name, and the fetched values."""
    with tf.Session() as s:
        values = s.run(fetches, feeds)
        (plan,) = s._plans.values()
        ((_, executor),) = plan.partitions
        nodes = executor.nodes
        offers = {nodes[i].name: names for i, names in executor.memory.in_place.items()}
    return offers, values


def test_memory_planning_treats_the_value_the_plugin_op_hands_on_as_identity_does():
    """The value Annotate hands on is still fetched: no kernel may write into it, as through an Identity."""
    data = np.linspace(-1, 1, 64 * 64, dtype=np.float32).reshape(64, 64)
    results = {}
    for through in (tf.identity, plugin.annotate):
        with tf.Graph().as_default():
            a = tf.placeholder(tf.float32, [64, 64])
            b = a * 2.0
            with tf.control_dependencies([tf.no_op()]):
                kept = through(b, name="kept")
            out = tf.nn.relu(kept, name="out")
            results[through] = _planned([b, out], {a: data})
    (identity_offers, (b_id, out_id)), (annotate_offers, (b_an, out_an)) = results.values()
    assert identity_offers.keys() == annotate_offers.keys() and "out" in annotate_offers
    assert [len(v) for v in identity_offers.values()] == [len(v) for v in annotate_offers.values()]
    for b_value, out_value in ((b_id, out_id), (b_an, out_an)):
        np.testing.assert_array_equal(b_value, data * 2)
        np.testing.assert_array_equal(out_value, np.maximum(data * 2, 0))


def test_the_plugin_pass_through_op_passes_gradients_on():
    x = tf.placeholder(tf.float64, [3])
    (grad,) = tf.gradients(tf.reduce_sum(plugin.annotate(x * x, note="squared")), x)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(grad, {x: [1.0, -2.0, 3.0]}), [2.0, -4.0, 6.0])


class _TimesThree:
    """A plugin op defined without a gradient."""

    ops = OpDefList()
    op_def = ops.define("TimesThree", inputs=["x: T"], outputs=["y: T"], attrs=["T: floating"],
                        shape_fn=common_shapes.unchanged_shape)
    kernels = KernelSet("CPU")
    kernels.add("TimesThree", lambda x: x * 3)

    @hookimpl
    def tensorweave_register_ops(self, registrar):
        registrar.add_ops(self.ops)

    @hookimpl
    def tensorweave_register_kernels(self, registrar):
        registrar.add_kernels(self.kernels)


@pytest.fixture
def times_three(monkeypatch):
    monkeypatch.setattr(gradients_impl, "_named_gradients", {})
    monkeypatch.setattr(_TimesThree.op_def, "grad", None)
    plugins.reload(extra_plugins=[(_TimesThree(), "times_three")])
    yield _TimesThree.op_def
    plugins.reload()


def test_register_gradient_gives_a_plugin_op_its_gradient_on_its_definition(times_three):
    x = tf.placeholder(tf.float64, [2])
    y = apply_op("TimesThree", [x])
    with pytest.raises(LookupError, match="no gradient defined for operation"):
        tf.gradients(y, x)

    @tf.RegisterGradient("TimesThree")
    def _times_three_grad(op, grad):
        return [grad * 3.0]

    assert times_three.grad is _times_three_grad
    (grad,) = tf.gradients(y * y, x)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(grad, {x: [1.0, -2.0]}), [18.0, -36.0])
    with pytest.raises(KeyError, match="already registered"):
        tf.RegisterGradient("TimesThree")(_times_three_grad)


def test_a_registered_gradient_name_overrides_and_leaves_a_defined_gradient_alone(times_three):
    @tf.RegisterGradient("Triple")
    def _triple(op, grad):
        return [grad * 3.0]

    x = tf.placeholder(tf.float64, [2])
    with tf.get_default_graph().gradient_override_map({"Identity": "Triple"}):
        y = tf.identity(x)
    assert tf.get_default_graph().get_operation_by_name(y.op.name).op_def.grad is not _triple
    tf.NotDifferentiable("TimesThree")
    (g_identity,) = tf.gradients(y, x)
    assert tf.gradients(apply_op("TimesThree", [x]), x) == [None]
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(g_identity, {x: [1.0, 2.0]}), [3.0, 3.0])


def test_every_op_def_field_is_documented_in_the_extension_api():
    import inspect
    import pathlib
    fields = [name for name, p in inspect.signature(OpDef).parameters.items() if p.kind is p.KEYWORD_ONLY]
    text = (pathlib.Path(__file__).parents[2] / "docs" / "api.md").read_text()
    section = text[text.index("## Extension API"):text.index("## Devices, placement and the runtime")]
    assert len(fields) >= 14 and [f for f in fields if f"`{f}" not in section and f != "doc"] == []


def test_broadcast_inputs_must_name_inputs_of_an_elementwise_op():
    with pytest.raises(ValueError, match="broadcast_inputs=.* of an op with is_elementwise=True"):
        OpDef("Scale", inputs=["x: float32", "s: float32"], outputs=["y: float32"], broadcast_inputs=(0,))
    with pytest.raises(ValueError, match=r"must name inputs \(0 to 1\)"):
        OpDef("Scale", inputs=["x: float32", "s: float32"], outputs=["y: float32"], is_elementwise=True,
              broadcast_inputs=(2,))
