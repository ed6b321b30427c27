"""TF1 scaffolding programs (flags, tf.app.run, tf.logging, tf.gfile) behave as under real TensorFlow.

The programs and operations are in ``fixtures/tf1/scaffold_programs.py``; ``scaffold.json`` holds what
TensorFlow printed, returned and raised. Each script runs in a fresh process (absl's flags are global).
"""

import json
import sys
from pathlib import Path

import pytest

import tensorweave as tf
from tf1_fixtures import load

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "tf1"))
from scaffold_programs import SCRIPTS, gfile_cases, run_script  # noqa: E402

CASES = load("scaffold")
SCRIPT_CASES = [(name, label) for name, (_, _, argvs) in SCRIPTS.items() for label in argvs]


def _tf1_log_first_n_miscount(expected):
    """TF counts log_every_n and log_first_n calls made at a module's top level under one shared key (its
    caller lookup walks past the user's frame), so its log_first_n there logged nothing; Tensorweave counts
    per call line as TF documents, and logs the first two."""
    at = expected.index("INFO:tensorflow:if true")
    return expected[:at] + ["INFO:tensorflow:first 2: 0", "INFO:tensorflow:first 2: 1"] + expected[at:]


@pytest.mark.parametrize("name,label", SCRIPT_CASES, ids=[f"{n}-{label}" for n, label in SCRIPT_CASES])
def test_script_runs_as_under_tf1(name, label, tmp_path):
    expected = CASES[f"script/{name}/{label}"]
    if name == "logging":
        expected = [expected[0], expected[1], _tf1_log_first_n_miscount(expected[2])]
    got = run_script(sys.executable, "import tensorweave as tf", name, SCRIPTS[name][2][label], str(tmp_path))
    assert got == expected


def test_gfile_operations_match_tf1(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = json.loads(json.dumps(gfile_cases(tf)))
    expected = CASES["gfile"]
    assert got.keys() == expected.keys()
    for name, want in expected.items():
        if name == "unknown_scheme":  # TF's message, then why (fsspec has no such file system)
            assert got[name][:2] == want[:2] and got[name][2].startswith(want[2]), got[name]
        else:
            assert got[name] == want, name


# Names TF 2.21's compat.v1 has that TF 1.15 did not (tf.io.gfile.join and get_registered_schemes came with
# TF 2) or that are TF's own import artefacts (tf.flags.tf_decorator).
NOT_IN_TF115 = {"io.gfile": {"join", "get_registered_schemes"}, "flags": {"tf_decorator"}}


@pytest.mark.parametrize("namespace", ["app", "flags", "logging", "gfile", "io.gfile"])
def test_namespace_has_every_tf1_name(namespace):
    module = tf
    for part in namespace.split("."):
        module = getattr(module, part)
    wanted = set(CASES["names"][namespace]) - NOT_IN_TF115.get(namespace, set())
    assert sorted(n for n in wanted if not hasattr(module, n)) == []


def test_app_flags_is_tf_flags_and_flags_are_absl_flags():
    from absl import flags as absl_flags
    assert tf.app.flags is tf.flags
    assert tf.flags.FLAGS["verbosity"] is absl_flags.FLAGS["verbosity"]
    assert tf.flags.UnrecognizedFlagError is absl_flags.UnrecognizedFlagError


def test_tf_io_has_tf115s_names_for_records_parsing_files_and_image_codecs():
    """tf.io gathers under TF 1.14+'s names what tf, tf.python_io and tf.image also have: the same functions."""
    for name in ("decode_jpeg", "decode_png", "decode_gif", "decode_bmp", "decode_image", "encode_jpeg", "encode_png"):
        assert getattr(tf.io, name) is getattr(tf.image, name), name
    for name in ("decode_raw", "decode_csv", "read_file", "write_file", "matching_files", "parse_example",
                 "parse_single_example", "parse_single_sequence_example", "FixedLenFeature", "VarLenFeature",
                 "FixedLenSequenceFeature"):
        assert getattr(tf.io, name) is getattr(tf, name), name
    for name in ("TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType", "tf_record_iterator"):
        assert getattr(tf.io, name) is getattr(tf.python_io, name), name
