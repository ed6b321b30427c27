"""Reference values made by real TensorFlow (``tests/fixtures/tf1/make_<topic>.py``), for tests to compare with."""

import importlib.util
import json
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).parent / "fixtures" / "tf1"


def load(topic):
    """The cases of ``<topic>.json``: a dict of case name -> recorded values (lists stay lists)."""
    path = FOLDER / f"{topic}.json"
    with open(path) as f:
        return json.load(f)["cases"]


def programs_module(name):
    """``tests/fixtures/tf1/<name>.py``: the programs a make script ran in TensorFlow, for the test to run here."""
    spec = importlib.util.spec_from_file_location(name, FOLDER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def array(value, dtype=None):
    """A recorded value as a numpy array; the strings "nan", "inf" and "-inf" become those floats."""
    def decode(v):
        if isinstance(v, list):
            return [decode(x) for x in v]
        return float(v) if isinstance(v, str) and v in ("nan", "inf", "-inf") else v
    return np.asarray(decode(value), dtype=dtype)
