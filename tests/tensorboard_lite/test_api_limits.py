"""Every input of the dashboard's HTTP API is checked: a number out of its range or not a number, a choice
not offered, a missing run or tag is a 400 naming the parameter and what it accepts (never a 500 and
never work or memory the request alone decides); what the server keeps between requests stays bounded;
a loopback server takes every loopback spelling of its Host and nothing else; idle connections close."""

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest

from tensorweave_board import FileWriter, protos
from tensorweave_board.histogram import histogram_proto
from tensorweave_board.images import encode_png
from tensorweave_board.server import web
from tensorweave_board.server.api import Api, BadRequest, NotFound
from tensorweave_board.server.logdir import Logdir
from tensorweave_board.server.web import BoardServer


def _write_run(folder, steps=20):
    with FileWriter(str(folder)) as w:
        for step in range(steps):
            s = protos.Summary()
            s.value.add(tag="loss", simple_value=1.0 / (step + 1))
            s.value.add(tag="w", histo=histogram_proto(np.random.default_rng(step).normal(size=100)))
            if step < 2:
                v = s.value.add(tag="img")
                v.image.height, v.image.width, v.image.colorspace = 1, 1, 1
                v.image.encoded_image_string = encode_png(np.full((1, 1, 1), step, np.uint8))
            w.add_summary(s, step)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    _write_run(root / "r")
    logdir = Logdir(str(root))
    logdir.reload()
    srv = BoardServer(logdir, "127.0.0.1", 0)
    srv.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _fetch(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


BASE = {"runs": {}, "scalars": {"run": "r", "tag": "loss"}, "histograms": {"run": "r", "tag": "w"},
        "image": {"run": "r", "tag": "img", "index": "0"}}
BAD = [  # route, parameter, value, what the answer must say the parameter accepts
    ("histograms", "bins", "5000000", "a whole number from 1 to 500"),
    ("histograms", "bins", "-3", "a whole number from 1 to 500"),
    ("histograms", "bins", "abc", "a whole number from 1 to 500"),
    ("histograms", "bins", "2.5", "a whole number from 1 to 500"),
    ("histograms", "bins", "nan", "a whole number from 1 to 500"),
    ("histograms", "bins", "", "a whole number from 1 to 500"),
    ("histograms", "max", "1e9", "a whole number from 1 to 500"),
    ("histograms", "max", "0", "a whole number from 1 to 500"),
    ("histograms", "max", "-1", "a whole number from 1 to 500"),
    ("scalars", "buckets", "100000", "a whole number from 1 to 10000"),
    ("scalars", "buckets", "0", "a whole number from 1 to 10000"),
    ("scalars", "buckets", "12.5", "a whole number from 1 to 10000"),
    ("scalars", "smoothing", "1", "a number from 0 to below 1"),
    ("scalars", "smoothing", "-0.5", "a number from 0 to below 1"),
    ("scalars", "smoothing", "inf", "a number from 0 to below 1"),
    ("scalars", "x", "steps", "one of step, relative, wall"),
    ("scalars", "min", "nan", "a finite number"),
    ("scalars", "max", "-inf", "a finite number"),
    ("scalars", "max", "1e999", "a finite number"),
    ("runs", "after", "-1", "a whole number from 0"),
    ("runs", "after", "1.5", "a whole number from 0"),
    ("runs", "after", "1e400", "a whole number from 0"),
    ("runs", "wait", "-1", "a number from 0 to 25"),
    ("runs", "wait", "1e9", "a number from 0 to 25"),
    ("runs", "wait", "nan", "a number from 0 to 25"),
    ("image", "index", "-1", "a whole number from 0"),
    ("image", "index", "x", "a whole number from 0"),
    ("image", "index", "1e3", "a whole number from 0"),
]


@pytest.mark.parametrize("route,name,value,accepts", BAD, ids=[f"{r}-{n}={v}" for r, n, v, _ in BAD])
def test_a_bad_parameter_is_a_400_naming_it_and_its_range(server, route, name, value, accepts):
    query = urllib.parse.urlencode({**BASE[route], name: value})
    status, body = _fetch(f"{server.url}api/{route}?{query}")
    assert status == 400
    message = json.loads(body)["error"]
    assert message.startswith(f"{name} must be {accepts}") and repr(value) in message


@pytest.mark.parametrize("route,params,name", [
    ("scalars", {"tag": "loss"}, "run"), ("scalars", {"run": "r"}, "tag"), ("histograms", {"run": "r"}, "tag"),
    ("image", {"run": "r", "tag": "img"}, "index"), ("graph", {}, "run"), ("timeline", {"run": "r"}, "tag"),
    ("scalars", {"run": "r", "tag": "loss", "min": "5", "max": "1"}, "min")])
def test_a_missing_or_inconsistent_parameter_is_a_400_naming_it(server, route, params, name):
    with pytest.raises(BadRequest, match=f"^{name} "):
        server.api.handle(route, params)


def test_the_limits_themselves_are_served(server):
    api = server.api
    hist = json.loads(api.handle("histograms", {**BASE["histograms"], "bins": "500", "max": "500"})[2])
    assert len(hist["edges"]) == 501 and len(hist["histograms"]) == 20
    assert all(sum(h["counts"]) == pytest.approx(100) for h in hist["histograms"])
    few = json.loads(api.handle("histograms", {**BASE["histograms"], "bins": "1", "max": "1"})[2])
    assert [h["step"] for h in few["histograms"]] == [0] and few["histograms"][0]["counts"] == [pytest.approx(100)]
    data = json.loads(api.handle("scalars", {**BASE["scalars"], "buckets": "1", "smoothing": "0.999"})[2])
    assert data["total"] == 20 and data["step"] == [0, 19]  # one bucket: its first, last, min and max
    with pytest.raises(NotFound, match="no image 2 for that tag: it has 2 .index 0 to 1."):
        api.handle("image", {**BASE["image"], "index": "2"})


def test_smoothing_a_series_many_ways_keeps_one_smoothed_copy(server):
    api = Api(server.logdir)
    for weight in np.linspace(0.01, 0.99, 300):
        api.handle("scalars", {**BASE["scalars"], "smoothing": repr(float(weight))})
    assert len(api._smoothed) == 1


def test_graph_views_are_kept_one_per_run(tmp_path):
    writer = FileWriter(str(tmp_path / "r"))
    graph = protos.GraphDef()
    graph.node.add(name="x", op="Placeholder")
    writer.add_graph(None, graph_def=graph)
    logdir = Logdir(str(tmp_path))
    api = Api(logdir)
    for step in range(5):  # a run traced every so often: each new trace places the graph anew
        metadata = protos.RunMetadata()
        metadata.step_stats.dev_stats.add(device="/device:CPU:0").node_stats.add(node_name="x")
        writer.add_run_metadata(metadata, f"step{step}", step)
        writer.flush()
        logdir.reload()
        assert json.loads(api.handle("graph", {"run": "r"})[2])["total_ops"] == 1
    writer.close()
    assert len(api._graphs) == 1


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:{port}", "127.0.0.1", "127.0.0.2:{port}", "[::1]",
                                  "[::1]:{port}"])
def test_a_loopback_server_takes_every_loopback_host_name(server, host):
    port = server.server_address[1]
    assert _fetch(server.url + "api/runs", {"Host": host.format(port=port)})[0] == 200


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:{port}", "127.0.0.1.attacker.example",
                                  "localhost.attacker.example:{port}", "[::1].example", "10.0.0.1:{port}", ""])
def test_a_loopback_server_refuses_other_host_names(server, host):
    port = server.server_address[1]
    assert _fetch(server.url + "api/runs", {"Host": host.format(port=port)})[0] == 403


def test_an_idle_connection_is_closed(server, monkeypatch):
    assert 25 < web._Handler.timeout <= 120  # longer than a long poll waits, so a page's connection is kept
    monkeypatch.setattr(web._Handler, "timeout", 0.3)
    with socket.create_connection(server.server_address[:2], timeout=10) as conn:
        started = time.monotonic()
        assert conn.recv(1) == b""  # the server hung up
        assert time.monotonic() - started < 5
