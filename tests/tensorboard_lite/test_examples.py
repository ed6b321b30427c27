"""The digits examples log summaries for the dashboard with the board package, and train the same without it."""

import os
import subprocess
import sys

import pytest

from tensorweave_board import read_events

pytest.importorskip("sklearn", reason="the digits examples need the examples extra: pip install tensorweave[examples]")
pytest.importorskip("tqdm", reason="the digits examples need the examples extra: pip install tensorweave[examples]")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "digits_mlp.py")


def _run(logdir, env=None):
    out = subprocess.run([sys.executable, EXAMPLE, "--steps", "25", "--summary-every", "5", "--quiet", "--logdir",
                          str(logdir)], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _events(folder):
    [name] = [f for f in os.listdir(folder) if "tfevents" in f]
    return read_events(os.path.join(folder, name))


def test_digits_example_writes_train_and_test_runs(tmp_path):
    stdout = _run(tmp_path / "mlp")
    assert f"tensorweave-board --logdir {tmp_path / 'mlp'}" in stdout
    train = _events(tmp_path / "mlp" / "train")
    steps = {v.tag: [] for e in train for v in e.summary.value}
    for e in train:
        for v in e.summary.value:
            steps[v.tag].append(e.step)
    assert steps["metrics/loss"] == [0, 5, 10, 15, 20] and steps["weights/hidden/kernel"] == [0, 5, 10, 15, 20]
    assert steps["inputs/image/0"] == [0, 5, 10, 15, 20] and steps["hyperparameters"] == [0]
    assert [e.tagged_run_metadata.tag for e in train if e.HasField("tagged_run_metadata")] == ["step5"]
    assert any(e.HasField("graph_def") for e in train)
    test = [(e.step, v.tag) for e in _events(tmp_path / "mlp" / "test") for v in e.summary.value]
    assert test == [(25, "metrics/loss"), (25, "metrics/accuracy")]


def test_digits_example_trains_without_the_board_package(tmp_path):
    env = dict(os.environ, TENSORWEAVE_DISABLE_PLUGINS="board")
    stdout = _run(tmp_path / "mlp", env)
    assert "final held-out accuracy" in stdout and "tensorweave-board" not in stdout
    assert sorted(f for f in os.listdir(tmp_path / "mlp") if not f.endswith(".lock")) == [
        "checkpoint", "metrics.csv"] + sorted(f for f in os.listdir(tmp_path / "mlp") if f.startswith("model.ckpt"))
