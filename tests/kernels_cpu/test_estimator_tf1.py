"""tf.estimator against TF's own Estimator (tests/fixtures/tf1/make_estimator.py): the same programs
(estimator_programs.py) give the same losses per step, resumed training, metrics, predictions and checkpoints."""

import sys

import numpy as np
import pytest

import tensorweave as tf
from tf1_fixtures import FOLDER, load

sys.path.insert(0, str(FOLDER))
from estimator_programs import PROGRAMS  # noqa: E402

CASES = load("estimator")
READS_EVENT_FILES = {"classifier_dataset_train_and_evaluate"}  # counts the evaluations' summaries


def _compare(ours, theirs, where):
    if isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs), where
        for key in theirs:
            _compare(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list) and theirs and isinstance(theirs[0], (list, str)):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(a, b, f"{where}[{i}]")
    elif isinstance(theirs, str):
        assert ours == theirs, where
    else:
        np.testing.assert_allclose(np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64),
                                   rtol=2e-5, atol=1e-6, err_msg=where)


@pytest.mark.parametrize("name", [pytest.param(name, marks=[pytest.mark.needs_board] * (name in READS_EVENT_FILES))
                                  for name in sorted(PROGRAMS)])
def test_estimator_program_matches_tensorflow(name, tmp_path):
    ours = PROGRAMS[name](tf, str(tmp_path / "model"))
    _compare(ours, CASES[name], name)
