"""The plugin contract: loading, listing, conflicts and failures, with the core alone or with plugins."""

import os
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


def _identity_plugin(name, priority, offset):
    class Plugin:
        kernels = KernelSet("CPU", priority=priority)
        kernels.add("Identity", lambda x: x + offset)

        @hookimpl
        def tensorweave_register_kernels(self, registrar):
            registrar.add_kernels(self.kernels)

    return (Plugin(), name)


def test_kernel_choice_does_not_depend_on_load_order(restore_plugins):
    low, high = _identity_plugin("low", 3, 1), _identity_plugin("high", 7, 100)
    results = []
    for order in ([low, high], [high, low]):
        registries = plugins.reload(extra_plugins=order).registries
        if registries.devices.get("CPU") is None:
            pytest.skip("needs the CPU kernels package")
        with tf.Graph().as_default(), tf.Session() as s:
            results.append(s.run(tf.identity(tf.constant(1))))
    assert results == [101, 101]


def test_a_plugin_whose_module_fails_to_import_is_reported_by_name(restore_plugins, monkeypatch, tmp_path):
    import importlib.metadata as metadata
    (tmp_path / "tw_raising_plugin.py").write_text("raise RuntimeError('broken at import time')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = metadata.entry_points
    extra = [metadata.EntryPoint("zz_raises", "tw_raising_plugin", "tensorweave"),
             metadata.EntryPoint("zz_missing", "tw_no_such_plugin_module", "tensorweave")]
    monkeypatch.setattr(metadata, "entry_points",
                        lambda **kw: list(real(**kw)) + (extra if kw.get("group") == "tensorweave" else []))
    with pytest.warns(RuntimeWarning) as caught:
        plugins.reload()
    warned = " ".join(str(w.message) for w in caught)
    assert "'zz_raises' is not loaded" in warned and "'zz_missing' is not loaded" in warned
    infos = {p.name: p for p in plugins.list_plugins()}
    assert "broken at import time" in infos["zz_raises"].errors[0]
    assert "tw_no_such_plugin_module" in infos["zz_missing"].errors[0]
    assert infos["tensorweave-core"].ok
    assert {name for name, info in infos.items() if not info.ok} == {"zz_raises", "zz_missing"}
    assert "zz_raises [?] FAILED" in plugins.format_listing()
    if "cpu" in infos:  # the others still work
        with tf.Session() as s:
            assert s.run(tf.add(tf.constant(2), 3)) == 5
    monkeypatch.undo()  # before restore_plugins reloads


_CORE_ALONE = r'''
import importlib.abc, sys
PLUGIN_PACKAGES = {"tensorweave_cpu", "tensorweave_example_plugin", "tensorweave_board", "tensorweave_distributed"}

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in PLUGIN_PACKAGES:
            raise ModuleNotFoundError(f"blocked: {name}")

sys.meta_path.insert(0, Block())
import numpy as np
import tensorweave as tf
x = tf.placeholder(tf.float32, [None, 3], name="x")
w = tf.Variable(np.ones((3, 2), np.float32), name="w")
y = tf.matmul(x, w)
assert y.shape.as_list() == [None, 2]
assert tf.gradients(tf.reduce_sum(y), [w])[0].shape.as_list() == [3, 2]
try:
    with tf.Session() as s:
        s.run(y, {x: np.ones((1, 3))})
except tf.errors.NotFoundError as e:
    print("ERROR:", e)
print("LOADED:", sorted(m for m in sys.modules if m.split(".")[0] in PLUGIN_PACKAGES))
'''


def test_import_tensorweave_with_the_core_alone():
    env = dict(os.environ, TENSORWEAVE_DISABLE_PLUGIN_AUTOLOAD="1")
    out = subprocess.run([sys.executable, "-c", _CORE_ALONE], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "LOADED: []" in out.stdout
    assert "no kernel for op" in out.stdout and "pip install tensorweave[cpu]" in out.stdout
    assert "Installed plugins: tensorweave-core" in out.stdout


class _FailsAfterRegisteringSome:
    """Registers an op and a kernel that ties with the CPU package's Identity, then fails in a later hook."""

    ops = OpDefList()
    ops.define("HalfLoadedOp", inputs=["x: float32"], outputs=["y: float32"])
    kernels = KernelSet("CPU", priority=0)
    kernels.add("Identity", lambda x: x + 1000)

    @hookimpl
    def tensorweave_register_ops(self, registrar):
        registrar.add_ops(self.ops)

    @hookimpl
    def tensorweave_register_kernels(self, registrar):
        registrar.add_kernels(self.kernels)

    @hookimpl
    def tensorweave_register_devices(self, registrar):
        raise RuntimeError("no device after all")


def test_a_plugin_that_fails_part_way_leaves_nothing_behind(restore_plugins):
    with pytest.warns(RuntimeWarning, match="'half' is not loaded: tensorweave_register_devices raised"):
        registries = plugins.reload(extra_plugins=[(_FailsAfterRegisteringSome(), "half")]).registries
    info = {p.name: p for p in plugins.list_plugins()}["half"]
    assert not info.ok and info.ops == [] and info.kernels == []
    assert "HalfLoadedOp" not in registries.ops
    assert all(k.plugin != "half" for k in registries.kernels.kernels_for("Identity"))
    if registries.devices.get("CPU") is not None:  # the CPU package's Identity is not broken by a tie
        with tf.Session() as s:
            assert s.run(tf.identity(tf.constant(1))) == 1


_MISSPELLED_HOOK = '''
from tensorweave.extension import KernelSet
from tensorweave.hookspecs import hookimpl

KERNELS = KernelSet("CPU", priority=50)
KERNELS.add("Identity", lambda x: x + 1000)

@hookimpl
def tensorweave_register_kernel(registrar):
    registrar.add_kernels(KERNELS)
'''


@pytest.mark.parametrize("marked", [True, False])
def test_a_misspelled_hook_fails_the_load_naming_it_and_the_hooks(restore_plugins, monkeypatch, tmp_path, marked):
    import importlib.metadata as metadata
    source = _MISSPELLED_HOOK if marked else _MISSPELLED_HOOK.replace("@hookimpl\n", "")
    module = f"tw_misspelled_plugin_{'marked' if marked else 'unmarked'}"
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    real = metadata.entry_points
    extra = [metadata.EntryPoint("zz_misspelled", module, "tensorweave")]
    monkeypatch.setattr(metadata, "entry_points",
                        lambda **kw: list(real(**kw)) + (extra if kw.get("group") == "tensorweave" else []))
    with pytest.warns(RuntimeWarning, match="'zz_misspelled' is not loaded"):
        plugins.reload()
    infos = {p.name: p for p in plugins.list_plugins()}
    error = infos["zz_misspelled"].errors[0]
    assert module in error and "tensorweave_register_kernel (did you mean" in error
    for hook in ("tensorweave_register_ops", "tensorweave_register_kernels", "tensorweave_register_devices"):
        assert hook in error
    assert {name for name, info in infos.items() if not info.ok} == {"zz_misspelled"}
    if "cpu" in infos:  # its kernel was never registered
        with tf.Session() as s:
            assert s.run(tf.identity(tf.constant(1))) == 1
    monkeypatch.undo()  # before restore_plugins reloads


def test_an_unmarked_hook_is_called():
    class Unmarked:
        ops = OpDefList()
        ops.define("UnmarkedHookOp", inputs=["x: float32"], outputs=["y: float32"])

        def tensorweave_register_ops(self, registrar):
            registrar.add_ops(self.ops)

    manager = plugins.PluginManager(autoload=False, extra_plugins=[(Unmarked(), "unmarked")]).load()
    assert manager.infos["unmarked"].ok and manager.infos["unmarked"].ops == ["UnmarkedHookOp"]


def test_register_plugin_runs_the_new_plugins_hooks_alone():
    calls = []

    class Late:
        ops = OpDefList()
        ops.define("LateOp", inputs=["x: float32"], outputs=["y: float32"])

        @hookimpl
        def tensorweave_register_ops(self, registrar):
            calls.append("ops")
            registrar.add_ops(self.ops)

        @hookimpl
        def tensorweave_register_devices(self, registrar):
            calls.append("devices")

    manager = plugins.PluginManager(autoload=False).load()
    core_ops = list(manager.infos["tensorweave-core"].ops)
    info = manager.register_plugin(Late(), "late")
    assert info.ok and info.ops == ["LateOp"] and calls == ["ops", "devices"]
    assert "LateOp" in manager.registries.ops and manager.infos["tensorweave-core"].ops == core_ops

    class Typo:
        @hookimpl
        def tensorweave_register_op(self, registrar):
            calls.append("typo")

    with pytest.warns(RuntimeWarning, match="tensorweave_register_op \\(did you mean tensorweave_register_ops"):
        info = manager.register_plugin(Typo(), "typo")
    assert not info.ok and calls == ["ops", "devices"]
