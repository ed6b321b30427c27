"""The dashboard server: its data API over a log directory (every point kept, min/max downsampling, exact
smoothing, incremental reading), its safety (127.0.0.1 by default, nothing outside the logdir, bad files
never crash it) and its graph and timeline views."""

import json
import os
import urllib.error
import urllib.request

import numpy as np
import pytest

from tensorweave_board import FileWriter, protos
from tensorweave_board.histogram import histogram_proto
from tensorweave_board.server import cli
from tensorweave_board.server.api import Api, NotFound
from tensorweave_board.server.downsample import ema, minmax_indices
from tensorweave_board.server.graph_view import GraphView
from tensorweave_board.server.logdir import Logdir
from tensorweave_board.server.web import BoardServer


def _summary(**tags):
    s = protos.Summary()
    for tag, value in tags.items():
        s.value.add(tag=tag, simple_value=value)
    return s


def _write_scalars(run_dir, values, tag="loss", start=0):
    with FileWriter(str(run_dir)) as w:
        for i, v in enumerate(values):
            w.add_summary(_summary(**{tag: float(v)}), start + i)


def _get(api, route, **params):
    status, kind, body = api.handle(route, {k: str(v) for k, v in params.items()})
    assert status == 200
    return json.loads(body) if kind == "application/json" else body


@pytest.fixture
def logdir(tmp_path):
    _write_scalars(tmp_path / "a", [3, 2, 1])
    _write_scalars(tmp_path / "b" / "nested", [5, 4], tag="acc")
    ld = Logdir(str(tmp_path))
    ld.reload()
    return ld


def test_runs_are_folders_and_scalars_come_back_exact(logdir):
    api = Api(logdir)
    runs = _get(api, "runs")["runs"]
    assert [(r["name"], r["tags"]["scalars"], r["scalar_counts"]) for r in runs] == [
        ("a", ["loss"], {"loss": 3}), ("b/nested", ["acc"], {"acc": 2})]
    data = _get(api, "scalars", run="a", tag="loss")
    assert data["total"] == 3 and data["step"] == [0, 1, 2] and data["value"] == [3.0, 2.0, 1.0]
    assert data["smoothed"] == data["value"]  # smoothing 0
    relative = _get(api, "scalars", run="a", tag="loss", x="relative")
    assert relative["x"][0] >= 0 and relative["x"] == sorted(relative["x"])
    assert _get(api, "scalars.csv", run="a", tag="loss").decode().splitlines()[1].endswith(",0,3.0")


def test_incremental_reading_sees_new_points(tmp_path):
    run = tmp_path / "live"
    writer = FileWriter(str(run))
    writer.add_summary(_summary(loss=1.0), 0)
    writer.flush()
    ld = Logdir(str(tmp_path))
    ld.reload()
    assert len(ld.runs["live"].scalars["loss"]) == 1
    for step in range(1, 4):
        writer.add_summary(_summary(loss=1.0 / (step + 1)), step)
    writer.flush()
    ld.reload()
    assert _get(Api(ld), "scalars", run="live", tag="loss")["step"] == [0, 1, 2, 3]
    writer.close()


def test_session_start_drops_points_a_restart_made_stale(tmp_path):
    _write_scalars(tmp_path / "r", [1, 2, 3, 4, 5])
    with FileWriter(str(tmp_path / "r")) as w:  # restarted from a checkpoint at step 3
        w.add_session_log(protos.SessionLog(status=protos.SessionLog.START), 3)
        w.add_summary(_summary(loss=9.0), 3)
    ld = Logdir(str(tmp_path))
    ld.reload()
    data = _get(Api(ld), "scalars", run="r", tag="loss")
    assert data["step"] == [0, 1, 2, 3] and data["value"] == [1.0, 2.0, 3.0, 9.0]


def test_a_million_points_are_downsampled_keeping_every_extreme():
    rng = np.random.default_rng(0)
    y = rng.normal(size=1_000_000).cumsum()
    x = np.arange(y.size, dtype=np.float64)
    idx = minmax_indices(x, y, buckets=500)
    assert 1000 < idx.size <= 2000 + 2
    assert y[idx].max() == y.max() and y[idx].min() == y.min() and idx[0] == 0 and idx[-1] == y.size - 1
    buckets = (x * 500 / x[-1]).astype(int).clip(max=499)
    for b in rng.integers(0, 500, size=20):  # every bucket keeps its own extremes
        members = np.flatnonzero(buckets == b)
        assert y[members].max() in y[idx] and y[members].min() in y[idx]
    zoomed = minmax_indices(x, y, 1000, 1400, buckets=500)
    assert zoomed.tolist() == list(range(999, 1402))  # a narrow range comes back at full resolution


def test_smoothing_is_tensorboards_debiased_ema_on_every_point():
    values = np.random.default_rng(1).normal(size=3000)
    values[17] = np.nan
    out = ema(values, 0.9)
    last, n, expected = 0.0, 0, []
    for v in values:
        if not np.isfinite(v):
            expected.append(v)
            continue
        last, n = last * 0.9 + 0.1 * v, n + 1
        expected.append(last / (1 - 0.9 ** n))
    np.testing.assert_allclose(out, expected, rtol=1e-9)
    assert np.isnan(out[17])


def test_histograms_images_and_text(tmp_path):
    from tensorweave_board.images import encode_png
    with FileWriter(str(tmp_path / "r")) as w:
        for step in range(3):
            s = protos.Summary()
            s.value.add(tag="w", histo=histogram_proto(np.arange(10.0) + step))
            v = s.value.add(tag="img/image")
            v.image.height, v.image.width, v.image.colorspace = 2, 2, 1
            v.image.encoded_image_string = encode_png(np.full((2, 2, 1), step, np.uint8))
            t = s.value.add(tag="note")
            t.metadata.plugin_data.plugin_name = "text"
            t.tensor.dtype, _ = 7, t.tensor.string_val.append(f"step {step}".encode())
            w.add_summary(s, step)
    ld = Logdir(str(tmp_path))
    ld.reload()
    api = Api(ld)
    hist = _get(api, "histograms", run="r", tag="w", bins=12)
    assert [h["step"] for h in hist["histograms"]] == [0, 1, 2] and len(hist["edges"]) == 13
    assert [sum(h["counts"]) for h in hist["histograms"]] == pytest.approx([10, 10, 10])
    assert hist["edges"][0] == 0.0 and hist["edges"][-1] == 11.0
    images = _get(api, "images", run="r", tag="img/image")["images"]
    assert [(i["step"], i["width"]) for i in images] == [(0, 2), (1, 2), (2, 2)]
    assert _get(api, "image", run="r", tag="img/image", index=2).startswith(b"\x89PNG")
    assert [t["text"] for t in _get(api, "text", run="r", tag="note")["texts"]] == ["step 0", "step 1", "step 2"]


def _graph_def():
    g = protos.GraphDef()
    for name, op, inputs, device in [
            ("x", "Placeholder", [], ""), ("dense/kernel", "VarHandleOp", [], "/device:CPU:0"),
            ("dense/kernel/Read", "ReadVariableOp", ["dense/kernel"], ""), ("dense/MatMul", "MatMul",
                                                                           ["x", "dense/kernel/Read"], ""),
            ("loss", "Mean", ["dense/MatMul"], ""), ("init", "NoOp", ["^dense/kernel"], "")]:
        n = g.node.add(name=name, op=op, device=device)
        n.input.extend(inputs)
    return g


def test_graph_is_grouped_by_scope_with_edges_between_children():
    view = GraphView(_graph_def(), devices={"dense/MatMul": "/device:TOY:0"})
    root = view.scope("")
    assert [(n["id"], n["kind"]) for n in root["nodes"]] == [("dense", "scope"), ("init", "op"), ("loss", "op"),
                                                            ("x", "op")]
    assert root["nodes"][0]["count"] == 3 and root["nodes"][0]["devices"] == {"/device:CPU:0": 1, "/device:TOY:0": 1,
                                                                             "": 1}
    assert {(e["source"], e["target"], e["control"]) for e in root["edges"]} == {
        ("x", "dense", False), ("dense", "loss", False), ("dense", "init", True)}
    dense = view.scope("dense")
    assert [n["id"] for n in dense["nodes"]] == ["dense/MatMul", "dense/kernel"]
    assert dense["nodes"][0]["device"] == "/device:TOY:0"  # from run metadata: the graph did not place it
    inner = view.scope("dense/kernel")
    assert [(n["id"], n["label"]) for n in inner["nodes"]] == [("dense/kernel/", "kernel"),
                                                              ("dense/kernel/Read", "Read")]
    assert [(e["source"], e["target"]) for e in inner["edges"]] == [("dense/kernel/", "dense/kernel/Read")]
    with pytest.raises(KeyError):
        view.scope("nope")


def test_graph_and_timeline_through_the_api(tmp_path):
    metadata = protos.RunMetadata()
    dev = metadata.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    for i, name in enumerate(["x", "dense/MatMul", "loss"]):
        dev.node_stats.add(node_name=name, all_start_micros=1000 + 10 * i, all_end_rel_micros=5,
                           timeline_label=f"{name} = Op{i}()")
    with FileWriter(str(tmp_path / "r")) as w:
        w.add_graph(None, graph_def=_graph_def())
        w.add_run_metadata(metadata, "step1", 1)
    ld = Logdir(str(tmp_path))
    ld.reload()
    api = Api(ld)
    assert _get(api, "runs")["runs"][0]["tags"]["run_metadata"] == ["step1"]
    ops = {n["id"]: n for n in _get(api, "graph", run="r", scope="dense")["nodes"]}
    assert ops["dense/MatMul"]["device"].endswith("CPU:0")
    tl = _get(api, "timeline", run="r", tag="step1")
    assert tl["duration"] == 25 and [op[:3] for op in tl["lanes"][0]["ops"]] == [
        ["x", "Op0", 0], ["dense/MatMul", "Op1", 10], ["loss", "Op2", 20]]
    trace = _get(api, "trace", run="r", tag="step1")
    assert [e["name"] for e in trace["traceEvents"] if e["ph"] == "X"] == ["x", "dense/MatMul", "loss"]
    for route, params in [("graph", {"run": "r", "scope": "zzz"}), ("timeline", {"run": "r", "tag": "x"}),
                          ("scalars", {"run": "nope", "tag": "loss"}), ("nothing", {})]:
        with pytest.raises(NotFound):
            api.handle(route, params)


def test_a_corrupt_file_is_reported_and_the_rest_still_served(tmp_path):
    _write_scalars(tmp_path / "good", [1, 2])
    _write_scalars(tmp_path / "bad", [1, 2, 3])
    path = os.path.join(tmp_path / "bad", os.listdir(tmp_path / "bad")[0])
    data = bytearray(open(path, "rb").read())
    data[-10] ^= 0xFF
    open(path, "wb").write(bytes(data))
    open(tmp_path / "good" / "events.out.tfevents.0.junk", "wb").write(b"\x00" * 5)  # a stub of a crashed writer
    ld = Logdir(str(tmp_path))
    with pytest.warns(UserWarning, match="corrupted record"):
        ld.reload()
    api = Api(ld)
    runs = _get(api, "runs")
    states = {f["file"].split(os.sep)[0]: f["state"] for f in runs["files"] if f["state"] != "ok"}
    assert states == {"bad": "corrupt", "good": "incomplete"}
    assert _get(api, "scalars", run="bad", tag="loss")["value"] == [1.0, 2.0]
    assert _get(api, "scalars", run="good", tag="loss")["value"] == [1.0, 2.0]


@pytest.fixture
def server(tmp_path):
    _write_scalars(tmp_path / "logs" / "run", [1, 2])
    (tmp_path / "secret.txt").write_text("do not serve")
    outside = tmp_path / "outside"
    _write_scalars(outside, [7])
    os.symlink(outside, tmp_path / "logs" / "linked")  # a link out of the logdir is not followed
    ld = Logdir(str(tmp_path / "logs"))
    ld.reload()
    srv = BoardServer(ld, "127.0.0.1", 0)
    srv.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_http_serves_the_page_scripts_and_api_and_404s_everything_else(server):
    base = server.url.rstrip("/")
    status, page = _fetch(base + "/")
    assert status == 200 and b"/static/js/app.js" in page and b"http" not in page.replace(b"http-equiv", b"")
    for script in (b"app.js", b"chart.js", b"graph.js", b"timeline.js", b"histogram.js"):
        assert _fetch(f"{base}/static/js/{script.decode()}")[0] == 200
    status, body = _fetch(base + "/api/runs")
    assert status == 200 and [r["name"] for r in json.loads(body)["runs"]] == ["run"]
    for path in ["/static/../../secret.txt", "/static/%2e%2e/%2e%2e/secret.txt", "/../secret.txt",
                 "/%2e%2e/secret.txt", "//etc/passwd", "/static/js/../../../../etc/passwd", "/secret.txt",
                 "/api/image?run=../outside&tag=loss&index=0", "/api/scalars?run=linked&tag=loss",
                 "/api/scalars?run=..&tag=loss", "/api/scalars?run=/etc&tag=passwd"]:
        status, body = _fetch(base + path)
        assert status == 404, path
        assert b"do not serve" not in body and b"root:" not in body
    assert _fetch(base + "/api/scalars?run=run&tag=loss&smoothing=abc")[0] == 400


def test_loopback_server_refuses_other_host_names(server):
    request = urllib.request.Request(server.url + "api/runs", headers={"Host": "attacker.example:6006"})
    status, body = _fetch(request)
    assert status == 403 and b"refused" in body
    request = urllib.request.Request(server.url + "api/runs", headers={"Host": "localhost"})
    assert _fetch(request)[0] == 200


def test_the_command_line_binds_localhost_by_default():
    args = cli.parse_args(["--logdir", "runs"])
    assert (args.host, args.port) == ("127.0.0.1", 6006)
    assert cli.main(["--logdir", "/nonexistent/dir"]) == 2
