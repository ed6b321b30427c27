"""examples/digits_estimator.py, the digits CNN as a tf.estimator model: it trains and evaluates per checkpoint
through train_and_evaluate, exports a SavedModel that parses tf.Examples, and serving it gives Estimator.predict's
classes."""

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("sklearn", reason="the digits examples need the examples extra: pip install tensorweave[examples]")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "digits_estimator.py")


def test_the_example_trains_evaluates_exports_and_serves(tmp_path):
    out = subprocess.run([sys.executable, EXAMPLE, "--epochs=1", f"--model_dir={tmp_path / 'model'}"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "INFO:tensorflow:Saving checkpoints for 45 into" in out.stderr
    assert re.search(r"INFO:tensorflow:Saving dict for global step 45: accuracy = [\d.]+, global_step = 45, "
                     r"loss = [\d.]+", out.stderr), out.stderr
    accuracy = float(re.search(r"step 45: test accuracy ([\d.]+)", out.stdout).group(1))
    assert accuracy > 0.85, out.stdout
    served = re.search(r"exported (\S+); served accuracy ([\d.]+), 360/360 served classes equal", out.stdout)
    assert served, out.stdout
    assert float(served.group(2)) == accuracy
    assert os.path.isfile(os.path.join(served.group(1), "saved_model.pb"))
    assert any(name.startswith("events.out.tfevents.") for name in os.listdir(tmp_path / "model" / "eval"))
