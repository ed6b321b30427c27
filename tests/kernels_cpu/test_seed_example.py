"""The TF1 program of the seed presentation (examples/seed_tf1_example.py) runs with only its import changed,
and its loss falls."""

import os
import re
import runpy
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the example loads scikit-learn's digits: pip install tensorweave[examples]")

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLE = os.path.join(ROOT, "examples", "seed_tf1_example.py")
SLIDES = os.path.join(ROOT, "..", "shared", "seeds", "tf-and-pytorch-presentation.txt")


def test_the_slide_program_trains_and_its_loss_falls(monkeypatch):
    monkeypatch.setattr(sys, "argv", [EXAMPLE, "--steps", "60"])
    program = runpy.run_path(EXAMPLE, run_name="seed_example")
    losses = np.array(program["losses"])
    assert len(losses) == 60 and np.isfinite(losses).all()
    assert losses[-10:].mean() < 0.1 * losses[:10].mean()
    assert program["sess"]._closed  # the slide's `with tf.Session() as sess:` closed it


def test_the_example_holds_the_slide_code_as_written():
    if not os.path.exists(SLIDES):
        pytest.skip(f"the seed slides are not next to this checkout ({SLIDES})")
    with open(SLIDES) as f:
        slides = f.read()
    blocks = re.findall(r"Phase [12]: [^\n]*\n\n```\n(.*?)```", slides, re.S)
    assert len(blocks) == 2
    with open(EXAMPLE) as f:
        example = [line.strip() for line in f]
    for line in (line.strip() for block in blocks for line in block.splitlines()):
        if line == "x_data, y_data = ... # Load one batch of input data.":
            line = "x_data, y_data = next(data) # Load one batch of input data."
        assert line in example, f"slide line missing from the example: {line!r}"
