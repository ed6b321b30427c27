"""Reference values made by real TensorFlow (``tests/fixtures/tf1/make_<topic>.py``), for tests to compare with."""

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).parent / "fixtures" / "tf1"


def load(topic):
    """The cases of ``<topic>.json``: a dict of case name -> recorded values (lists stay lists)."""
    path = FOLDER / f"{topic}.json"
    with open(path) as f:
        return json.load(f)["cases"]


def array(value, dtype=None):
    """A recorded value as a numpy array; the strings "nan", "inf" and "-inf" become those floats."""
    def decode(v):
        if isinstance(v, list):
            return [decode(x) for x in v]
        return float(v) if isinstance(v, str) and v in ("nan", "inf", "-inf") else v
    return np.asarray(decode(value), dtype=dtype)


def programs(module):
    """The ``PROGRAMS`` of ``fixtures/tf1/<module>.py`` (programs written once for TensorFlow and Tensorweave)."""
    spec = importlib.util.spec_from_file_location(module, FOLDER / f"{module}.py")
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded.PROGRAMS


_EXACT = ("names", "shapes", "trainable", "out_shapes", "unknown_rank", "seed")


def assert_matches(got, want, where, rtol=2e-5, atol=2e-5):
    """A program's results against TF's: names, shapes and strings exactly, values (lists of outputs and
    gradients, or single arrays, in dicts) to float32 rounding."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for k in want:
            assert_matches(got[k], want[k], f"{where}.{k}", rtol, atol)
    elif where.rsplit(".", 1)[-1] in _EXACT:
        assert got == want, where
    elif where.endswith(("outputs", "grads", "values", "state")):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_matches(g, w, f"{where}[{i}]", rtol, atol)
    elif array(want).dtype.kind in "USOb":
        assert np.asarray(got).tolist() == want, where
    else:
        np.testing.assert_allclose(np.asarray(got, np.float64), array(want), rtol=rtol, atol=atol, err_msg=where)


def tf_python():
    """An interpreter with real TensorFlow ($TENSORWEAVE_TF_PYTHON or /work/tf-venv/bin/python), or None: tests
    that hand files to TensorFlow skip without one (TensorFlow is never a dependency of the tests)."""
    for candidate in (os.environ.get("TENSORWEAVE_TF_PYTHON"), "/work/tf-venv/bin/python"):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


NO_TF_REASON = "no interpreter with TensorFlow: set TENSORWEAVE_TF_PYTHON to one (TensorFlow is never a dependency " \
               "of Tensorweave's tests)"


def run_in_tf(source, *args):
    """Runs ``source`` with real TensorFlow (CPU only, quiet) and returns the completed process."""
    return subprocess.run([tf_python(), "-c", source, *map(str, args)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3"})
