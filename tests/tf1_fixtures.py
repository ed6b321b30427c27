"""Reference values made by real TensorFlow (``tests/fixtures/tf1/make_<topic>.py``), for tests to compare with."""

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


def tf_python():
    """An interpreter with real TensorFlow ($TENSORWEAVE_TF_PYTHON or /work/tf-venv/bin/python), or None: tests
    of round trips through TensorFlow skip without one (TensorFlow is never a dependency of the tests)."""
    for candidate in (os.environ.get("TENSORWEAVE_TF_PYTHON"), "/work/tf-venv/bin/python"):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


NO_TF_REASON = ("no interpreter with TensorFlow: set TENSORWEAVE_TF_PYTHON to one (TensorFlow is never a "
                "dependency of Tensorweave's tests)")


def run_in_tf(script, *args, timeout=300):
    """Runs ``script`` (Python source) with real TensorFlow; returns the last line it printed, parsed as JSON."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([tf_python(), "-c", script, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"TensorFlow failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
