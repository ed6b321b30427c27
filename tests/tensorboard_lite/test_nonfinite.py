"""What event files hold that JSON cannot (NaN and infinite values, wall times, histogram bounds) is served,
as the strings "NaN", "Infinity" and "-Infinity" in every reply; charts mark non-finite points; histograms
are rebinned from whatever a foreign writer put in them; a tensor summary that cannot be shown is skipped
alone, not with the events read with it."""

import contextlib
import json
import logging

import numpy as np
import pytest

from tensorweave_board import protos
from tensorweave_board.histogram import histogram_proto
from tensorweave_board.images import encode_png
from tensorweave_board.record_io import RecordWriter
from tensorweave_board.server.api import Api
from tensorweave_board.server.downsample import marker_indices
from tensorweave_board.server.histogram_bins import rebin
from tensorweave_board.server.logdir import Logdir
from tensorweave.extension import tensor_protos

NAN, INF = float("nan"), float("inf")


def _strict(body):
    """The reply parsed as strict JSON (NaN, Infinity and -Infinity are not JSON)."""
    def refuse(name):
        raise AssertionError(f"{name} in a reply")
    return json.loads(body, parse_constant=refuse)


def _get(api, route, **params):
    status, kind, body = api.handle(route, {k: str(v) for k, v in params.items()})
    assert status == 200
    return _strict(body)


def _event(writer, step, wall, *values):
    summary = protos.Summary()
    summary.value.extend(values)
    writer.write(protos.Event(step=step, wall_time=wall, summary=summary).SerializeToString())


@contextlib.contextmanager
def _foreign_writer(folder):
    """Records written as they come: no file_version event first, whatever its wall time."""
    folder.mkdir()
    with open(folder / "events.out.tfevents.1.foreign", "wb") as f:
        yield RecordWriter(f)


def _scalar(tag, value):
    return protos.Summary.Value(tag=tag, simple_value=value)


@pytest.fixture
def foreign(tmp_path):
    """A run as a foreign writer might leave it: NaN wall times, non-finite values and histogram bounds."""
    with _foreign_writer(tmp_path / "r") as w:
        walls = [NAN, 100.0, 101.0, NAN, 103.0, 104.0, 105.0]
        values = [1.0, NAN, 2.0, INF, -INF, 3.0, 4.0]
        for step, (wall, value) in enumerate(zip(walls, values)):
            _event(w, step, wall, _scalar("loss", value))
        bad_bounds = histogram_proto(np.arange(10.0))
        bad_bounds.min, bad_bounds.max = NAN, INF
        bad_counts = histogram_proto(np.arange(10.0) + 5)
        bad_counts.bucket[3] = NAN
        bad_counts.bucket_limit[-1] = INF
        _event(w, 0, NAN, protos.Summary.Value(tag="h", histo=bad_bounds))
        _event(w, 1, 101.0, protos.Summary.Value(tag="h", histo=bad_counts))
        nothing = protos.HistogramProto(min=NAN, max=NAN, num=3)
        nothing.bucket_limit.extend([NAN, NAN])
        nothing.bucket.extend([1, 2])
        _event(w, 2, 102.0, protos.Summary.Value(tag="h", histo=nothing))
        image = protos.Summary.Value(tag="img")
        image.image.height, image.image.width, image.image.colorspace = 1, 1, 1
        image.image.encoded_image_string = encode_png(np.zeros((1, 1, 1), np.uint8))
        _event(w, 0, -INF, image)
        text = protos.Summary.Value(tag="note", tensor=tensor_protos.make_tensor_proto(b"hello"))
        text.metadata.plugin_data.plugin_name = "text"
        _event(w, 0, INF, text)
        tensor = protos.Summary.Value(tag="t", tensor=tensor_protos.make_tensor_proto(np.float32(NAN)))
        tensor.metadata.plugin_data.plugin_name = "scalars"
        _event(w, 0, NAN, tensor)
    with _foreign_writer(tmp_path / "many") as w:  # (a long run of records: read by the vectorized path)
        for step in range(300):
            _event(w, step, NAN if step < 50 else 200.0 + step, _scalar("loss", float(step)))
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    return Api(logdir)


def test_scalars_send_every_non_finite_value_and_wall_time_as_a_string(foreign):
    data = _get(foreign, "scalars", run="r", tag="loss")
    assert data["step"] == [0, 1, 2, 3, 4, 5, 6] and data["total"] == 7 and data["nonfinite"] == 3
    assert data["value"] == [1.0, "NaN", 2.0, "Infinity", "-Infinity", 3.0, 4.0]
    assert data["wall"] == ["NaN", 100.0, 101.0, "NaN", 103.0, 104.0, 105.0]
    assert data["no_x"] == 0
    smoothed = _get(foreign, "scalars", run="r", tag="loss", smoothing=0.5)["smoothed"]
    assert smoothed[1:5] == ["NaN", smoothed[2], "Infinity", "-Infinity"]
    assert all(isinstance(smoothed[i], float) for i in (0, 2, 5, 6))
    assert _get(foreign, "scalars", run="r", tag="t")["value"] == ["NaN"]


@pytest.mark.parametrize("axis", ["relative", "wall"])
def test_points_without_a_wall_time_have_no_place_on_a_time_axis(foreign, axis):
    data = _get(foreign, "scalars", run="r", tag="loss", x=axis)
    assert data["step"] == [1, 2, 4, 5, 6] and data["no_x"] == 2 and data["total"] == 7
    assert data["x"] == [w - (100.0 if axis == "relative" else 0) for w in (100.0, 101.0, 103.0, 104.0, 105.0)]
    assert data["value"] == ["NaN", 2.0, "-Infinity", 3.0, 4.0]
    many = _get(foreign, "scalars", run="many", tag="loss", x=axis)
    assert many["no_x"] == 50 and many["step"] == list(range(50, 300))
    assert many["x"][0] == (0.0 if axis == "relative" else 250.0)


def test_histograms_with_non_finite_bounds_or_counts_are_drawn_from_their_buckets(foreign):
    data = _get(foreign, "histograms", run="r", tag="h", bins=30)
    first, second, nothing = data["histograms"]
    assert all(np.isfinite(data["edges"]))
    assert (first["min"], first["max"]) == ("NaN", "Infinity")
    assert sum(first["counts"]) == pytest.approx(10)  # placed by its buckets' edges
    assert sum(second["counts"]) == pytest.approx(10 - 1)  # the NaN count counts as empty
    assert nothing["counts"] == [0.0] * 30 and (nothing["min"], nothing["wall"]) == ("NaN", 102.0)


def test_every_other_reply_serves_non_finite_wall_times(foreign):
    assert _get(foreign, "images", run="r", tag="img")["images"][0]["wall"] == "-Infinity"
    assert _get(foreign, "text", run="r", tag="note")["texts"][0]["wall"] == "Infinity"
    assert foreign.handle("scalars.csv", {"run": "r", "tag": "loss"})[2].decode().splitlines()[1:3] == [
        "nan,0,1.0", "100.0,1,nan"]


def test_non_finite_points_are_marked_one_per_kind_and_bucket():
    x = np.arange(100_000, dtype=np.float64)
    y = np.where(x % 3 == 0, NAN, np.where(x % 3 == 1, INF, -INF))
    idx = marker_indices(x, y, buckets=100)
    assert idx.size == 300 and (np.diff(idx) > 0).all()
    kinds = {(int(i) // 1000, "nan" if np.isnan(y[i]) else str(y[i])) for i in idx}
    assert len(kinds) == 300  # every bucket keeps one of each kind
    assert marker_indices(x, y, 10.0, 20.0, buckets=100).tolist() == list(range(10, 21))


def _rebin_one_bucket_at_a_time(hmin, hmax, limits, counts, edges):
    """The reference: each bucket's count spread uniformly over its range clipped to [hmin, hmax], or put
    in the bin holding it when that range is empty."""
    out = np.zeros(len(edges) - 1)
    lefts = np.clip(np.concatenate([[hmin], limits[:-1]]), hmin, hmax)
    for left, right, count in zip(lefts, np.clip(limits, hmin, hmax), counts):
        if count <= 0:
            continue
        if right <= left:
            out[min(max(int(np.searchsorted(edges, left, side="right")) - 1, 0), len(out) - 1)] += count
        else:
            out += count * np.clip(np.minimum(edges[1:], right) - np.maximum(edges[:-1], left), 0, None) / (
                right - left)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_rebinning_equals_spreading_each_bucket(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        data = rng.normal(rng.uniform(-5, 5), rng.uniform(1e-3, 10), size=rng.integers(1, 3000))
        if rng.random() < 0.2:
            data = np.full(rng.integers(1, 5), rng.uniform(-3, 3))
        h = histogram_proto(data)
        limits, counts = np.array(h.bucket_limit), np.array(h.bucket)
        edges = np.linspace(min(h.min, rng.uniform(-20, 0)), max(h.max, rng.uniform(0, 20)), rng.integers(2, 300))
        expected = _rebin_one_bucket_at_a_time(h.min, h.max, limits, counts, edges)
        np.testing.assert_allclose(rebin(h.min, h.max, limits, counts, edges), expected, rtol=1e-9,
                                   atol=1e-9 * counts.sum())


def test_a_tensor_summary_that_cannot_be_shown_is_skipped_alone(tmp_path, caplog):
    def tagged(tag, plugin, tensor):
        value = protos.Summary.Value(tag=tag, tensor=tensor)
        value.metadata.plugin_data.plugin_name = plugin
        return value

    with _foreign_writer(tmp_path / "r") as w:
        for step in range(3):
            _event(w, step, 100.0 + step,
                   tagged("vector", "scalars", tensor_protos.make_tensor_proto(np.ones(3, np.float32))),
                   tagged("ragged", "histograms", tensor_protos.make_tensor_proto(np.ones(4))),
                   tagged("words", "histograms",
                          tensor_protos.make_tensor_proto(np.array([b"a", b"b", b"c"], dtype=object))),
                   tagged("picture", "images",
                          tensor_protos.make_tensor_proto(np.array([b"wide", b"2", b"png"], dtype=object))),
                   _scalar("loss", float(step)))
        huge = protos.TensorProto(dtype=protos.DATA_TYPES["DT_STRING"], string_val=[b"x"])
        huge.tensor_shape.dim.add(size=1 << 50)  # one string claimed to fill 2^50 elements
        _event(w, 3, 103.0, tagged("huge", "text", huge), _scalar("loss", 3.0))
    logdir = Logdir(str(tmp_path))
    with caplog.at_level(logging.WARNING, "tensorweave_board"):
        logdir.reload()
    run = logdir.runs["r"]
    assert run.scalars["loss"].arrays()[2].tolist() == [0.0, 1.0, 2.0, 3.0]  # the events around them are kept
    assert not run.images and not run.histograms and not run.texts and "vector" not in run.scalars
    warned = sorted(r.getMessage().split("summary ")[1].split(" at byte")[0] for r in caplog.records)
    assert warned == ["'huge'", "'picture'", "'ragged'", "'vector'", "'words'"]  # once each, not each step
