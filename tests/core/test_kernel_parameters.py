"""Registration refuses a compute function whose parameters do not fit its op: attrs are keyword-only."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import plugins
from tensorweave.extension import KernelSet, OpDefList, apply_op, common_shapes
from tensorweave.hookspecs import hookimpl


@pytest.fixture
def restore_plugins():
    yield
    plugins.reload()


def _softclip_ops():
    ops = OpDefList()
    ops.define("SoftClip", inputs=["x: T"], outputs=["y: T"], attrs=["T: {float32, float64}", "c: float"],
               shape_fn=common_shapes.unchanged_shape)
    ops.define("SoftClipSum", inputs=["xs: N * T"], outputs=["y: T"],
               attrs=["T: {float32, float64}", "N: int >= 1", "c: float"], shape_fn=common_shapes.unchanged_shape)
    return ops


def _plugin(register):
    """An in-process plugin defining SoftClip and registering its kernels with ``register(registrar)``."""
    class Plugin:
        ops = _softclip_ops()

        @hookimpl
        def tensorweave_register_ops(self, registrar):
            registrar.add_ops(self.ops)

        @hookimpl
        def tensorweave_register_kernels(self, registrar):
            register(registrar)

    return Plugin()


def _kernel_set(fn, op_type="SoftClip", **kwargs):
    kernels = KernelSet("CPU", priority=5)
    kernels.register(op_type, **kwargs)(fn)
    return lambda registrar: registrar.add_kernels(kernels)


def _load_failing(register):
    with pytest.warns(RuntimeWarning, match="'softclip' is not loaded") as caught:
        plugins.reload(extra_plugins=[(_plugin(register), "softclip")])
    info = {p.name: p for p in plugins.list_plugins()}["softclip"]
    assert not info.ok and info.ops == [] and info.kernels == []
    assert "SoftClip" not in plugins.get_registries().ops
    assert str(caught[0].message).endswith(info.errors[0])
    return info.errors[0]


def softclip_with_default(x, c=2.0):
    return c * np.tanh(x / c)


def test_an_attr_taken_positionally_with_a_default_is_refused(restore_plugins):
    message = _load_failing(_kernel_set(softclip_with_default))
    line = softclip_with_default.__code__.co_firstlineno
    assert "plugin 'softclip'" in message and "op 'SoftClip' on CPU" in message
    assert f"{__name__}.softclip_with_default ({__file__}:{line})" in message
    assert "attr 'c' as a positional parameter with a default" in message
    assert "attrs are keyword-only parameters: def softclip_with_default(x, *, c)" in message


def test_add_kernel_applies_the_same_rule(restore_plugins):
    message = _load_failing(lambda registrar: registrar.add_kernel("SoftClip", softclip_with_default,
                                                                  dtypes=["float32"]))
    assert "attr 'c' as a positional parameter" in message and "def softclip_with_default(x, *, c)" in message


def test_more_positional_parameters_than_inputs_are_refused(restore_plugins):
    def softclip(x, y):
        return x

    message = _load_failing(_kernel_set(softclip))
    assert "takes 2 positional parameters ['x', 'y'] but the op has 1 input ['x'], so ['y'] never receives an input" \
        in message


def test_fewer_positional_parameters_than_inputs_are_refused(restore_plugins):
    def softclip(*, c):
        return c

    assert "takes 0 positional parameters [] but the op has 1 input ['x']" in _load_failing(_kernel_set(softclip))


def test_a_keyword_only_parameter_that_is_no_attr_is_refused(restore_plugins):
    def softclip(x, *, cap):
        return x

    message = _load_failing(_kernel_set(softclip))
    assert "keyword-only parameter 'cap' without a default, which is no attr" in message and "'c'" in message


def test_an_attr_after_list_inputs_taken_positionally_is_refused(restore_plugins):
    def softclip_sum(xs, c=1.0):
        return xs

    message = _load_failing(_kernel_set(softclip_sum, "SoftClipSum"))
    assert "attr 'c' as a positional parameter" in message


def _run_softclip(kernels):
    registries = plugins.reload(extra_plugins=[(_plugin(kernels), "softclip")]).registries
    assert {p.name: p for p in plugins.list_plugins()}["softclip"].ok
    if registries.devices.get("CPU") is None:
        pytest.skip("needs the CPU kernels package")
    x = np.array([-4.0, 0.5, 6.0])
    with tf.Session() as s:
        one = s.run(apply_op("SoftClip", [tf.constant(x)], attrs={"c": 3.0}))
        summed = s.run(apply_op("SoftClipSum", [[tf.constant(x), tf.constant(2 * x)]], attrs={"c": 3.0}))
    np.testing.assert_allclose(one, 3.0 * np.tanh(x / 3.0))
    np.testing.assert_allclose(summed, 3.0 * np.tanh(3 * x / 3.0))


def test_keyword_only_attrs_get_the_attrs_values(restore_plugins):
    def softclip(x, *, c, xp):
        return c * xp.tanh(x / c)

    def softclip_sum(*xs, c, N):
        assert len(xs) == N
        return c * np.tanh(sum(xs) / c)

    kernels = KernelSet("CPU", priority=5)
    kernels.add("SoftClip", softclip)
    kernels.add("SoftClipSum", softclip_sum)
    _run_softclip(lambda registrar: registrar.add_kernels(kernels))


def test_context_kernels_and_library_callables_fit(restore_plugins):
    def softclip(ctx, x, *, c):
        assert ctx.node.op_type == "SoftClip"
        return c * np.tanh(x / c)

    def softclip_sum(ctx, xs, ys, *, c):
        return c * np.tanh((xs + ys) / c)

    def register(registrar):
        registrar.add_kernel("SoftClip", softclip, context=True, priority=5)
        registrar.add_kernel("SoftClipSum", softclip_sum, context=True, priority=5)
        registrar.add_kernel("Add", np.add, device_type="NOWHERE")  # a ufunc: (x1, x2, /, out=None, *, where=...)

    _run_softclip(register)


def test_every_installed_plugin_loads_under_the_rule():
    manager = plugins.PluginManager().load()
    assert [info.errors for info in manager.infos.values() if not info.ok] == []
    kernels = manager.registries.kernels
    checked = {k.plugin for op in kernels.op_types() for k in kernels.kernels_for(op) if k.compute is not None}
    assert checked >= {"tensorweave-core"} | ({"cpu", "example"} & set(manager.infos))
