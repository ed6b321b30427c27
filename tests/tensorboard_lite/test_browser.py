"""The dashboard in a real browser: headless Chromium (Debian's package, driven by Playwright) against the
server over a log directory written by a short run of the digits MLP example. Screenshots of every view
are kept in test-artifacts/tensorboard_lite/."""

import math
import os
import shutil
import sys

import numpy as np
import pytest

from tensorweave_board import FileWriter, protos
from tensorweave_board.histogram import histogram_proto
from tensorweave_board.record_io import RecordWriter
from tensorweave_board.server.logdir import Logdir
from tensorweave_board.server.web import BoardServer

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: apt-get install -y chromium "
                                                         "(make test installs it when run as root)")
sync_api = pytest.importorskip("playwright.sync_api", reason="needs the test extra: pip install playwright")
pytest.importorskip("sklearn", reason="the digits example needs the examples extra: pip install tensorweave[examples]")
pytest.importorskip("tqdm", reason="the digits example needs the examples extra: pip install tensorweave[examples]")

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ARTIFACTS = os.path.join(ROOT, "test-artifacts", "tensorboard_lite")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]
STEPS, EPOCHS, EVERY = 90, 2, 10  # 45 steps an epoch at batch 32
NAN, INF = float("nan"), float("inf")


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("runs")
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import digits_mlp
        digits_mlp.main(["--steps", str(STEPS), "--epochs", str(EPOCHS), "--quiet", "--summary-every", str(EVERY),
                         "--logdir", str(logdir / "digits_mlp")])
    finally:
        sys.path.remove(os.path.join(ROOT, "examples"))
    _write_foreign_run(logdir / "foreign")
    _write_audio_run(logdir / "sounds")
    live = FileWriter(str(logdir / "live"))
    for step in range(3):
        live.add_summary(_scalar("progress", step), step)
    live.flush()
    ld = Logdir(str(logdir), reload_interval=0.5)
    ld.reload()
    ld.start()
    server = BoardServer(ld, "127.0.0.1", 0)
    server.start()
    os.makedirs(ARTIFACTS, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(server.url)
        yield page, errors, live
        browser.close()
    live.close()
    ld.stop()
    server.shutdown()
    server.server_close()


FOREIGN_VALUES = [1.0, 2.0, NAN, 1.5, INF, 3.0, -INF, 2.5, 2.0, 1.0]  # three marks, seven points on the line


def _write_foreign_run(folder):
    """A run as a foreign writer might leave it: NaN and infinite values, NaN wall times, histogram bounds."""
    folder.mkdir()
    with open(folder / "events.out.tfevents.1.foreign", "wb") as f:
        writer = RecordWriter(f)
        for step, value in enumerate(FOREIGN_VALUES):
            summary = _scalar("foreign/value", value)
            if step < 2:
                histogram = summary.value.add(tag="foreign/weights", histo=histogram_proto(np.arange(20.0) + step))
                histogram.histo.min, histogram.histo.max = NAN, NAN
            event = protos.Event(step=step, wall_time=NAN if step in (2, 8) else 100.0 + step, summary=summary)
            writer.write(event.SerializeToString())


def _saturated_pixels(locator):
    """How many pixels of a canvas are strongly coloured (a run's colour; the axes and grid are grey)."""
    return locator.evaluate("""(c) => {
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i + 3] > 128 && Math.abs(d[i] - d[i + 1]) + Math.abs(d[i + 1] - d[i + 2]) > 80) { n += 1; }
      }
      return n;
    }""")


def _scalar(tag, value):
    summary = protos.Summary()
    summary.value.add(tag=tag, simple_value=float(value))
    return summary


def _write_audio_run(folder):
    """Two steps of a 0.25 s tone (tf.summary.audio, one clip)."""
    import tensorweave as tf
    with tf.Graph().as_default():
        tone = tf.sin(tf.linspace(0.0, 2000.0, 2000))[None] * 0.3
        summary = tf.summary.audio("tone", tone, 8000.0, max_outputs=1)
        with tf.Session() as sess, FileWriter(str(folder)) as writer:
            for step in (0, 5):
                writer.add_summary(sess.run(summary), step)


def _tab(page, name):
    page.click(f"#tabs button[data-tab={name}]")


def test_scalar_charts_show_each_tag_with_every_point(board):
    page, errors, _ = board
    train_points, test_points = math.ceil(STEPS / EVERY), EPOCHS
    for tag in ("metrics/loss", "metrics/accuracy"):
        card = page.locator(f'.card[data-tag="{tag}"][data-loaded="1"]')
        card.wait_for(timeout=15000)
        assert card.locator("h3").inner_text().strip() == tag
        train = card.locator('li[data-run="digits_mlp/train"]')
        test = card.locator('li[data-run="digits_mlp/test"]')
        assert train.get_attribute("data-total") == str(train_points)
        assert test.get_attribute("data-total") == str(test_points)
        assert f"{train_points} points" in train.inner_text()
    page.screenshot(path=os.path.join(ARTIFACTS, "scalars.png"))
    page.check('#x-axis input[value="relative"]')
    page.fill("#tag-filter", "loss")
    page.wait_for_function("document.querySelectorAll('#view-scalars .card').length === 1")
    page.locator('.card[data-tag="metrics/loss"][data-loaded="1"]').wait_for()
    page.screenshot(path=os.path.join(ARTIFACTS, "scalars-relative-filtered.png"))
    page.fill("#tag-filter", "")
    assert errors == []


def test_a_chart_with_nan_and_infinite_points_draws_its_line_and_marks_them(board):
    page, errors, _ = board
    card = page.locator('.card[data-tag="foreign/value"][data-loaded="1"]')
    card.wait_for(timeout=15000)
    legend = card.locator('li[data-run="foreign"]')  # (the previous test left the relative axis on)
    assert "10 points (8 drawn), 3 NaN/Inf, 2 without a wall time" in legend.inner_text()
    assert card.locator("canvas").get_attribute("data-marks") == "2"  # the NaN point has no wall time
    page.check('#x-axis input[value="step"]')
    page.wait_for_function("document.querySelector('.card[data-tag=\"foreign/value\"] canvas').dataset.marks === '3'")
    assert legend.get_attribute("data-total") == "10" and legend.get_attribute("data-nonfinite") == "3"
    assert legend.inner_text().split() == ["foreign:", "10", "points,", "3", "NaN/Inf", "csv"]
    assert _saturated_pixels(card.locator("canvas")) > 300  # the line through the seven finite points
    card.screenshot(path=os.path.join(ARTIFACTS, "scalars-nonfinite.png"))
    _tab(page, "histograms")
    histogram = page.locator('#view-histograms .card[data-run="foreign"][data-loaded="1"]')
    histogram.wait_for(timeout=15000)
    assert histogram.get_attribute("data-count") == "2" and _saturated_pixels(histogram.locator("canvas")) > 300
    _tab(page, "scalars")
    assert errors == []


def test_histograms_images_and_text_views(board):
    page, errors, _ = board
    train_points = math.ceil(STEPS / EVERY)
    _tab(page, "histograms")
    cards = page.locator('#view-histograms .card[data-loaded="1"][data-run^="digits_mlp"]')
    page.wait_for_function("document.querySelectorAll('#view-histograms .card[data-loaded=\"1\"]"
                           "[data-run^=\"digits_mlp\"]').length === 4")
    tags = sorted(cards.nth(i).get_attribute("data-tag") for i in range(cards.count()))
    assert tags == ["weights/hidden/bias", "weights/hidden/kernel", "weights/logits/bias", "weights/logits/kernel"]
    assert {cards.nth(i).get_attribute("data-count") for i in range(4)} == {str(train_points)}
    page.screenshot(path=os.path.join(ARTIFACTS, "histograms.png"))
    _tab(page, "images")
    page.wait_for_function("document.querySelectorAll('#view-images .card[data-loaded=\"1\"]').length === 3")
    image = page.locator('#view-images .card[data-tag="inputs/image/0"] img')
    page.wait_for_function("document.querySelector('#view-images img').naturalWidth === 8")
    assert image.get_attribute("alt") == f"inputs/image/0 at step {(train_points - 1) * EVERY}"
    page.screenshot(path=os.path.join(ARTIFACTS, "images.png"))
    _tab(page, "text")
    page.locator('#view-text .card[data-tag="hyperparameters"][data-loaded="1"]').wait_for()
    rows = page.locator("#view-text table tr")
    assert rows.first.inner_text().split() == ["setting", "value"]
    assert "learning_rate\t0.002" in page.locator("#view-text table").inner_text()
    page.screenshot(path=os.path.join(ARTIFACTS, "text.png"))
    assert errors == []


def test_audio_view_plays_the_clips(board):
    page, errors, _ = board
    _tab(page, "audio")
    card = page.locator('#view-audio .card[data-run="sounds"][data-tag="tone/audio"][data-loaded="1"]')
    card.wait_for(timeout=15000)
    assert card.get_attribute("data-count") == "2"
    assert card.locator(".sub").last.inner_text() == "step 5 · 2000 frames × 1 channel(s) · 2 clips"
    page.wait_for_function("Math.abs(document.querySelector('#view-audio audio').duration - 0.25) < 1e-3",
                           timeout=15000)  # the browser decoded the WAV's header
    page.screenshot(path=os.path.join(ARTIFACTS, "audio.png"))
    assert errors == []


def test_graph_view_shows_the_ops_grouped_by_scope(board):
    page, errors, _ = board
    _tab(page, "graph")
    page.locator('#graph-svg g.node[data-id="hidden"]').wait_for(timeout=15000)
    labels = set(page.locator("#graph-svg g.node > text").all_text_contents())
    assert {"images", "labels"} <= labels
    assert any(t.startswith("▸ hidden (") for t in labels) and any(t.startswith("▸ Adam (") for t in labels)
    page.screenshot(path=os.path.join(ARTIFACTS, "graph.png"))
    page.click('#graph-svg g.node[data-id="hidden"]')
    page.locator('#graph-svg g.node[data-id="hidden/MatMul"]').wait_for()
    assert page.locator('#graph-svg g.node[data-id="hidden/MatMul"]').get_attribute("data-op") == "MatMul"
    assert page.locator('#graph-svg g.node.expanded[data-id="hidden"]').count() == 1
    page.click('#graph-svg g.node[data-id="hidden/MatMul"]')
    assert "MatMul" in page.locator("#graph-info").inner_text()
    page.screenshot(path=os.path.join(ARTIFACTS, "graph-expanded.png"))
    assert errors == []


def test_timeline_view_draws_the_traced_step(board):
    page, errors, _ = board
    _tab(page, "timeline")
    page.locator("#timeline-box canvas").wait_for(timeout=15000)
    assert page.locator("#timeline-tag option").all_inner_texts() == [f"step{EVERY}"]
    height = page.evaluate("document.querySelector('#timeline-box canvas').clientHeight")
    assert height > 22 + 22  # the axis and at least one lane
    page.screenshot(path=os.path.join(ARTIFACTS, "timeline.png"))
    assert errors == []


def test_new_points_appear_while_a_run_writes(board):
    page, errors, live = board
    _tab(page, "scalars")
    legend = page.locator('.card[data-tag="progress"] li[data-run="live"]')
    legend.wait_for(timeout=15000)
    assert legend.get_attribute("data-total") == "3"
    for step in range(3, 8):
        live.add_summary(_scalar("progress", step), step)
    live.flush()
    page.wait_for_function("document.querySelector('.card[data-tag=\"progress\"] li[data-run=\"live\"]')"
                           ".dataset.total === '8'", timeout=15000)
    page.screenshot(path=os.path.join(ARTIFACTS, "scalars-live.png"))
    assert errors == []
