"""Reference values made by real TensorFlow (``tests/fixtures/tf1/make_<topic>.py``), for tests to compare with."""

import importlib
import json
import os
import subprocess
import sys
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


def programs_module(name):
    """The module ``tests/fixtures/tf1/<name>.py`` whose programs both TensorFlow (its make script) and the tests
    run; the folder goes on ``sys.path`` so such modules can import each other, as they do under TensorFlow."""
    if str(FOLDER) not in sys.path:
        sys.path.insert(0, str(FOLDER))
    return importlib.import_module(name)


def _numeric(value):
    """A recorded value as a numeric (or bool) array, or None for strings, ragged lists and static shapes."""
    try:
        result = array(value)
    except (ValueError, TypeError):
        return None
    return result if result.dtype.kind in "biuf" else None


def _static_shape(value):
    return isinstance(value, list) and None in value and all(v is None or isinstance(v, int) for v in value)


def assert_matches(got, want, where="", rtol=2e-5, atol=2e-6):
    """Asserts that ``got`` (what a program returned: dicts, lists, arrays, SparseTensorValues, strings) matches the
    recorded ``want``: keys, lengths, shapes, strings and integers exactly, floats within ``rtol``/``atol``. A
    recorded static shape (ints and None) is matched by any shape at least as precise."""
    if isinstance(want, dict) and hasattr(got, "_asdict"):  # a SparseTensorValue against its recorded parts
        got = got._asdict()
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_matches(got[key], want[key], f"{where}[{key!r}]", rtol, atol)
        return
    if want is None or isinstance(want, str) and want not in ("nan", "inf", "-inf"):
        got = got.decode("latin-1") if isinstance(got, bytes) else got
        assert got == want, f"{where}: {got!r} != {want!r}"
        return
    expected = _numeric(want)
    if expected is None and _static_shape(want):
        assert len(got) == len(want) and all(w is None or g == w for g, w in zip(got, want)), \
            f"{where}: static shape {got} does not refine TF's {want}"
        return
    if expected is None:
        assert len(got) == len(want), f"{where}: {len(got)} values, TF1 has {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_matches(g, w, f"{where}[{i}]", rtol, atol)
        return
    got = np.asarray(got)
    if got.size == 0 and expected.size == 0:
        return
    assert got.shape == expected.shape, f"{where}: shape {got.shape}, TF1 {expected.shape}"
    if got.dtype.kind in "biu" and expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected, err_msg=where)
    else:
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=where)


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
