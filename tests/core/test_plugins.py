"""The plugin contract: loading, listing, conflicts and failures, with the core alone or with plugins."""

import subprocess
import sys

import pytest

import tensorweave as tf
from tensorweave import plugins
from tensorweave.extension import KernelSet, OpDefList, hookimpl


@pytest.fixture
def restore_plugins():
    yield
    plugins.reload()


def test_core_registers_its_ops_through_the_hooks():
    infos = {p.name: p for p in plugins.list_plugins()}
    core = infos["tensorweave-core"]
    assert core.ok and "MatMul" in core.ops and "Const" in core.ops
    assert core.distribution == "tensorweave-core" and core.version


class _DuplicatePlugin:
    ops = OpDefList()
    ops.define("MatMul", inputs=["a: float32"], outputs=["b: float32"])

    @hookimpl
    def tensorweave_register_ops(self, registrar):
        registrar.add_ops(self.ops)


class _BrokenPlugin:
    @hookimpl
    def tensorweave_register_ops(self, registrar):
        raise RuntimeError("boom at load")


class _GoodPlugin:
    ops = OpDefList()
    ops.define("GoodOp", inputs=["x: float32"], outputs=["y: float32"])

    @hookimpl
    def tensorweave_register_ops(self, registrar):
        registrar.add_ops(self.ops)


def test_duplicate_op_names_both_plugins(restore_plugins):
    with pytest.warns(RuntimeWarning, match="dupe"):
        plugins.reload(autoload=False, extra_plugins=[(_DuplicatePlugin(), "dupe")])
    info = {p.name: p for p in plugins.list_plugins()}["dupe"]
    assert not info.ok
    assert "tensorweave-core" in info.errors[0] and "dupe" in info.errors[0]


def test_broken_plugin_is_reported_and_others_still_load(restore_plugins):
    with pytest.warns(RuntimeWarning, match="broken"):
        plugins.reload(autoload=False, extra_plugins=[(_BrokenPlugin(), "broken"), (_GoodPlugin(), "good")])
    infos = {p.name: p for p in plugins.list_plugins()}
    assert "boom at load" in infos["broken"].errors[0]
    assert infos["good"].ok and infos["good"].ops == ["GoodOp"]
    assert "broken" in plugins.format_listing() and "FAILED" in plugins.format_listing()


def test_kernel_priority_decides_and_ties_are_errors(restore_plugins):
    class High:
        kernels = KernelSet("CPU", priority=5)
        kernels.add("Identity", lambda x: x + 100)

        @hookimpl
        def tensorweave_register_kernels(self, registrar):
            registrar.add_kernels(self.kernels)

    class Tie:
        kernels = KernelSet("CPU", priority=5)
        kernels.add("Identity", lambda x: x)

        @hookimpl
        def tensorweave_register_kernels(self, registrar):
            registrar.add_kernels(self.kernels)

    registries = plugins.reload(extra_plugins=[(High(), "high")]).registries
    if registries.devices.get("CPU") is None:
        pytest.skip("needs the CPU kernels package")
    with tf.Session() as s:
        assert s.run(tf.identity(tf.constant(1))) == 101
    plugins.reload(extra_plugins=[(High(), "high"), (Tie(), "tie")])
    with tf.Session() as s, pytest.raises(tf.errors.InternalError, match="tie at priority 5.*high.*tie|tie.*high"):
        s.run(tf.identity(tf.constant(2)))


def test_running_without_kernels_names_op_devices_plugins_and_package(restore_plugins):
    plugins.reload(autoload=False)
    x = tf.constant([1.0, 2.0])
    y = tf.matmul([[1.0]], [[2.0]])
    with tf.Session() as s:
        with pytest.raises(tf.errors.NotFoundError) as info:
            s.run(y)
    msg = str(info.value)
    assert "no kernel for op 'Const'" in msg and "Devices: none" in msg and "tensorweave-core" in msg
    assert "pip install tensorweave[cpu]" in msg
    assert x is not None


def test_cli_lists_plugins():
    out = subprocess.run([sys.executable, "-m", "tensorweave.cli", "plugins"], capture_output=True, text=True,
                         timeout=120)
    assert "tensorweave-core" in out.stdout
    assert out.returncode == 0, out.stdout + out.stderr


def test_missing_namespace_says_what_to_install(restore_plugins):
    plugins.reload(autoload=False)
    import importlib
    mod = importlib.import_module("tensorweave")
    mod.__dict__.pop("summary", None)
    with pytest.raises(ImportError, match="pip install tensorweave\\[board\\]"):
        mod.summary.scalar("x", 1.0)
