"""Shared fixtures: every test starts with a fresh default graph; a ``cpu_only`` test runs without the GPU; a
``needs_board`` test skips where the tensorboard-lite package is not installed (``tox -e cpu``)."""

import importlib.util
import os

import pytest

import tensorweave as tf
from tensorweave import plugins


def pytest_configure(config):
    config.addinivalue_line("markers", "cpu_only: the test checks a CPU mechanism (fusion, memory planning, "
                                       "placement among CPU devices); where a GPU is the default device it runs with "
                                       "the GPU plugin disabled")
    config.addinivalue_line("markers", "needs_board: the test reads or writes summaries or event files, which "
                                       "tensorweave[board] (the tensorboard-lite package) provides")


def pytest_collection_modifyitems(config, items):
    if importlib.util.find_spec("tensorweave_board") is not None:
        return
    skip = pytest.mark.skip(reason="summaries and event files need tensorweave[board]: pip install tensorweave[board]")
    for item in items:
        if item.get_closest_marker("needs_board"):
            item.add_marker(skip)


def _gpu_plugin_names():
    return [info.name for info in plugins.list_plugins() if "GPU" in info.devices]


@pytest.fixture(autouse=True)
def cpu_only_when_marked(request, monkeypatch):
    """Tests marked ``cpu_only`` see the plugins without the GPU's (every other test runs where the placer puts
    it, on the GPU when there is one)."""
    gpu_plugins = _gpu_plugin_names() if request.node.get_closest_marker("cpu_only") else []
    if not gpu_plugins:
        yield
        return
    monkeypatch.setenv("TENSORWEAVE_DISABLE_PLUGINS", ",".join(gpu_plugins))
    plugins.reload()
    yield
    monkeypatch.delenv("TENSORWEAVE_DISABLE_PLUGINS")
    plugins.reload()


@pytest.fixture(autouse=True)
def fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture
def sess():
    with tf.Session() as s:
        yield s


@pytest.fixture
def digits_examples(monkeypatch):
    """The digits example modules by model name, imported from examples/ (skipped without the examples extra)."""
    reason = "the digits examples need the examples extra: pip install tensorweave[examples]"
    for module in ("sklearn", "tqdm"):
        pytest.importorskip(module, reason=reason)
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(__file__), "..", "examples"))
    import digits_cnn
    import digits_mlp
    return {"mlp": digits_mlp, "cnn": digits_cnn}
