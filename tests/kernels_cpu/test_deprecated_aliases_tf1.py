"""TF 1.x's deprecated top-level op names (tf.arg_max, tf.div, tf.to_float...) compute what TF computed,
and every TF 1.x alias of a name Tensorweave has resolves too."""

import json
import sys
from pathlib import Path

import tensorweave as tf
from tf1_fixtures import load

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "tf1"))
from scaffold_programs import alias_values  # noqa: E402

CASES = load("scaffold")


def test_alias_values_dtypes_and_op_names_match_tf1():
    got = json.loads(json.dumps(alias_values(tf)))
    expected = CASES["aliases/values"]
    assert {name: got[name] for name in expected} == expected


def test_every_tf1_alias_of_a_name_tensorweave_has_resolves():
    """Each group is TF 1.x top-level names bound to one function (or a deprecated wrapper of it)."""
    partial = [(group, [n for n in group if hasattr(tf, n)]) for group in CASES["aliases/groups"]]
    assert [(group, have) for group, have in partial if have and len(have) != len(group)] == []
