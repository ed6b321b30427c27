"""Shared fixtures: every test starts with a fresh default graph."""

import os

import pytest

import tensorweave as tf


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
