"""tools/tf1_api_coverage.py: families are counted as documented, and every symbol of the scaffolding
families (tf.app, tf.flags, tf.logging, tf.gfile, the MNIST reader) that public TF1 programs use resolves."""

import importlib.util
from pathlib import Path

import pytest

import tensorweave as tf

_TOOL = Path(__file__).parents[2] / "tools" / "tf1_api_coverage.py"
_spec = importlib.util.spec_from_file_location("tf1_api_coverage", _TOOL)
coverage_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(coverage_tool)


@pytest.mark.parametrize("symbol,family", [
    ("tf.nn.relu", "nn"), ("tf.app.flags.DEFINE_string", "flags"), ("tf.flags.FLAGS", "flags"),
    ("tf.io.gfile.exists", "gfile"), ("tf.to_float", "(top level)"), ("tf.GraphKeys.LOSSES", "(top level)"),
    ("tf.float16.max", "(top level)"), ("tf.image.decode_jpeg", "image"),
    ("tf.examples.tutorials.mnist.input_data.read_data_sets", "examples (mnist)"),
])
def test_family(symbol, family):
    assert coverage_tool.family(symbol, tf) == family


def test_resolves_walks_attributes():
    assert coverage_tool.resolves(tf, "tf.examples.tutorials.mnist.input_data.read_data_sets")
    assert not coverage_tool.resolves(tf, "tf.gfile.NoSuchThing")


def test_scaffolding_families_fully_resolve():
    try:
        tsv = coverage_tool.find_tsv()
    except SystemExit:
        pytest.skip("notes/tf1-api-usage.tsv is not beside this checkout (shared/notes)")
    table = coverage_tool.coverage(coverage_tool.read_rows(tsv), tf)
    for family in ("app", "flags", "logging", "gfile", "examples (mnist)"):
        assert table[family]["missing"] == [], family
    assert {"tf.arg_max", "tf.arg_min"}.isdisjoint(table["(top level)"]["missing"])
