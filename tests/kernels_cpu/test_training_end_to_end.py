"""The digits examples train for real: a short run of each beats chance by far, reports its progress and
leaves a checkpoint and metrics in its log directory."""

import csv

import pytest

import tensorweave as tf


@pytest.mark.parametrize("name,steps,minimum", [("mlp", 200, 0.85), ("cnn", 150, 0.8)])
def test_a_short_run_learns_the_digits(name, steps, minimum, digits_examples, tmp_path, capsys):
    logdir = tmp_path / name
    accuracy = digits_examples[name].main(["--steps", str(steps), "--logdir", str(logdir)])
    assert accuracy >= minimum  # chance is 0.1
    out, err = capsys.readouterr()
    assert f"final held-out accuracy: {accuracy:.4f}" in out and f"{steps} steps" in out
    assert "loss=" in err and "acc=" in err  # the progress bar shows both
    with open(logdir / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    assert float(rows[-1]["test_accuracy"]) == pytest.approx(accuracy) and int(rows[-1]["step"]) == steps
    assert tf.train.latest_checkpoint(str(logdir)).endswith(f"model.ckpt-{steps}")
    assert ("global_step", []) in tf.train.list_variables(str(logdir))
