"""examples/char_lstm.py, the character-level LSTM language model written with tf.nn.rnn_cell, dynamic_rnn and
tf.metrics, runs a short training, lowers the held-out perplexity, and samples text by feeding its state back."""

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("sklearn", reason="the example's text ships with scikit-learn: pip install tensorweave[examples]")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "char_lstm.py")


def test_a_short_run_learns_and_samples():
    out = subprocess.run([sys.executable, EXAMPLE, "--steps=40", "--eval_every=20", "--units=32", "--seq_len=16",
                          "--sample_length=30"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    evaluations = re.findall(r"INFO:tensorflow:step (\d+): .*held-out perplexity ([\d.]+), next-character accuracy "
                             r"([\d.]+)", out.stderr)
    assert [int(step) for step, _, _ in evaluations] == [0, 20, 40], out.stderr
    perplexities = [float(p) for _, p, _ in evaluations]
    assert perplexities[0] > 60 and perplexities[-1] < perplexities[0] / 2.5, out.stderr  # 92 characters at first
    assert float(evaluations[-1][2]) > 0.15, out.stderr
    text, final = out.stdout.rsplit("\n", 2)[-3:-1]
    assert final == f"final held-out perplexity {perplexities[-1]:.2f}, next-character accuracy {evaluations[-1][2]}"
    assert out.stdout.startswith("The ") and len(out.stdout) >= len("The ") + 30 + len(final)
