"""The fast paths of reading big event files give exactly what record-by-record reading gives: vectorized
framing and CRC32C (against a one-by-one reference reader, on regular, periodic, irregular, truncated and
corrupted files), scalar events decoded from their bytes (against protobuf, on varied and mutated events,
non-scalar ones falling back), and a run's data (against adding every event parsed by protobuf)."""

import contextlib
import http.client
import json
import random
import signal
import struct
import subprocess
import sys
import threading
import time
import urllib.request

import crc32c
import numpy as np
import pytest

from tensorweave_board import crc_batch, protos, scalar_events
from tensorweave_board.event_reader import EventFileLoader, read_events
from tensorweave_board.record_io import DataLossWarning, RecordReader, frame, masked_crc
from tensorweave_board.server.api import Api
from tensorweave_board.server.downsample import ema
from tensorweave_board.server.logdir import Logdir
from tensorweave_board.server.run_data import RunData, ScalarSeries


def _reference(data):
    """Records of ``data`` read one by one as TFRecord readers do: (offsets, records, state, error offset, why)."""
    pos, offsets, records = 0, [], []
    while pos < len(data):
        if len(data) - pos < 12:
            return offsets, records, "incomplete", None, None
        length, length_crc = struct.unpack_from("<QI", data, pos)
        if masked_crc(data[pos:pos + 8]) != length_crc:
            return offsets, records, "corrupt", pos, "length"
        if pos + 16 + length > len(data):
            return offsets, records, "incomplete", None, None
        body = data[pos + 12:pos + 12 + length]
        if masked_crc(body) != struct.unpack_from("<I", data, pos + 12 + length)[0]:
            return offsets, records, "corrupt", pos, "data"
        offsets.append(pos)
        records.append(body)
        pos += 16 + length
    return offsets, records, "ok", None, None


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _scalar_event(step, value, tag="loss", wall=None):
    event = protos.Event(wall_time=1.7e9 + step * 0.01 if wall is None else wall, step=step)
    event.summary.value.add(tag=tag, simple_value=value)
    return event.SerializeToString()


def _mixed_payloads(seed):
    """Payloads in the shapes real files have: long runs of one size, tags interleaved, odd sizes."""
    rng = random.Random(seed)
    out = [protos.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString()]
    out += [_scalar_event(s, s * 0.5) for s in range(300)]  # crosses the 1- to 2-byte step at 128
    for s in range(300, 700):
        out += [_scalar_event(s, 1.0, "loss"), _scalar_event(s, 2.0, "accuracy")]
        if s % 50 == 0:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3000))))
    out += [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 90))) for _ in range(200)]
    out += [_scalar_event(s, -1.0, "t" * (s % 3 + 1)) for s in range(700, 1500)]
    out.append(b"x" * 70_000)
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_crc32c_of_many_records_equals_the_crc32c_package(seed):
    rng = np.random.default_rng(seed)
    for length in [1, 2, 3, 7, 8, 9, 15, 28, 64, 200]:
        count, stride = 70, length + 5
        buf = bytearray(rng.integers(0, 256, count * stride + 3, dtype=np.uint8).tobytes())
        for i in range(count):  # some columns the same in every record, as in event files
            buf[3 + i * stride:3 + i * stride + length // 2] = bytes(range(length // 2))
        buf = bytes(buf)
        got = crc_batch.crc32c_many(buf, 3, stride, count, length)
        want = [crc32c.crc32c(buf[3 + i * stride:3 + i * stride + length]) for i in range(count)]
        assert got.tolist() == want
        assert crc_batch.mask(got).tolist() == [masked_crc(buf[3 + i * stride:3 + i * stride + length])
                                                for i in range(count)]
        assert crc_batch.varying_columns(buf, 3, stride, count, length)[:length // 2].sum() == 0


@pytest.mark.parametrize("chunk", [None, 4096, 70_100])
def test_block_framing_equals_reading_one_record_at_a_time(tmp_path, monkeypatch, chunk):
    path = str(tmp_path / "events.out.tfevents.1.x")
    data = b"".join(frame(p) for p in _mixed_payloads(0))
    _write(path, data)
    if chunk:
        monkeypatch.setattr(RecordReader, "CHUNK", chunk)
    reader = RecordReader(path)
    offsets, records = reader.read_columns()
    ref_offsets, ref_records, state, _, _ = _reference(data)
    assert (offsets, records, reader.state, reader.offset) == (ref_offsets, ref_records, state, len(data))
    reader = RecordReader(path)
    block = reader.read_block()
    assert reader.read_columns(max_records=10)[0] == ref_offsets[block.count:block.count + 10]
    if chunk is None:
        assert sum(s.count for s in block.stretches) > block.count // 3  # the runs were framed vectorized


@pytest.mark.parametrize("chunk", [None, 8192])
def test_truncated_and_corrupted_files_stop_where_one_by_one_reading_stops(tmp_path, monkeypatch, chunk):
    if chunk:
        monkeypatch.setattr(RecordReader, "CHUNK", chunk)
    clean = b"".join(frame(p) for p in _mixed_payloads(1))
    rng = random.Random(2)
    path = str(tmp_path / "events.out.tfevents.2.x")
    cases = [clean[:n] for n in (5, 12, 100, len(clean) // 2, len(clean) - 1)]
    for i in range(60):  # one bit flipped, half of the time in the runs of scalars at the start
        damaged = bytearray(clean)
        damaged[rng.randrange(len(clean) // (4 if i % 2 else 1))] ^= 1 << rng.randrange(8)
        cases.append(bytes(damaged))
    for data in cases:
        _write(path, data)
        reader = RecordReader(path)
        with pytest.warns(DataLossWarning) if _reference(data)[2] == "corrupt" else contextlib.nullcontext():
            offsets, records = reader.read_columns()
        ref_offsets, ref_records, state, error_offset, why = _reference(data)
        assert (offsets, records, reader.state) == (ref_offsets, ref_records, state)
        if state == "corrupt":
            assert reader.error_offset == error_offset and f"the {why}'s checksum" in reader.error
            assert reader.read_columns() == ([], [])


def test_damage_in_a_short_run_is_found_too(tmp_path):
    records = [frame(bytes([i]) * 30) for i in range(52)] + [frame(b"y" * 50)]  # 32 stepped, then a run of 20
    path = str(tmp_path / "events.out.tfevents.2.x")
    for damaged in (40, 51):
        data = bytearray(b"".join(records))
        data[damaged * 46 + 20] ^= 4
        _write(path, bytes(data))
        reader = RecordReader(path)
        with pytest.warns(DataLossWarning, match=f"corrupted record at byte {damaged * 46} .the data's"):
            assert reader.read_columns()[0] == _reference(bytes(data))[0] == [i * 46 for i in range(damaged)]


def test_a_file_read_while_it_grows_gets_every_record_once(tmp_path):
    path = str(tmp_path / "events.out.tfevents.3.x")
    data = b"".join(frame(_scalar_event(s, float(s))) for s in range(5000))
    loader, points = EventFileLoader(path), []
    with open(path, "wb") as f:
        for cut in range(0, len(data) + 7919, 7919):  # pieces that end inside records
            f.write(data[cut:cut + 7919])
            f.flush()
            batch = loader.load_batch()
            points += sorted([*zip(batch.scalars.ordinals.tolist(), batch.scalars.steps.tolist()),
                              *((int(batch.slow_ordinals[i]), e.step) for i, _, e in batch.events())])
    assert [step for _, step in points] == list(range(5000)) and loader.state == "ok"


STEPS = [0, 1, 127, 128, 16383, 16384, 2 ** 21, 2 ** 31, 2 ** 40, 2 ** 62, 2 ** 63 - 1, -1, -2 ** 63]
VALUES = [0.0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"), 3.4e38, 1e-45, -7.25]
TAGS = ["loss", "", "a" * 118, "a" * 119, "ünï/cödé", "train/accuracy"]  # '': no tag field; 119: 2-byte sizes


def _variants():
    """(name, serialized Event, plain) for events around the fast path's edges; plain ones must take it."""
    out = []
    for step in STEPS:
        out.append((f"step {step}", _scalar_event(step, 1.0), 0 <= step))
    for value in VALUES:
        out.append((f"value {value}", _scalar_event(5, value), True))
    for tag in TAGS:
        out.append((f"tag {tag[:8]!r} ({len(tag)})", _scalar_event(5, 1.0, tag), 1 <= len(tag.encode()) <= 118))
    out.append(("no wall time", _scalar_event(3, 1.0, wall=0.0), False))
    e = protos.Event(wall_time=2.0, step=3)
    v = e.summary.value.add(tag="m", simple_value=1.0)
    v.metadata.plugin_data.plugin_name = "scalars"
    out.append(("metadata", e.SerializeToString(), False))
    e = protos.Event(wall_time=2.0, step=3)
    e.summary.value.add(tag="a", simple_value=1.0)
    e.summary.value.add(tag="b", simple_value=2.0)
    out.append(("two values", e.SerializeToString(), False))
    e = protos.Event(wall_time=2.0, step=3)
    e.summary.value.add(tag="n", node_name="x", simple_value=1.0)
    out.append(("node name", e.SerializeToString(), False))
    e = protos.Event(wall_time=2.0, step=3)
    e.summary.value.add(tag="h", histo=protos.HistogramProto(min=1, max=2, num=3))
    out.append(("histogram", e.SerializeToString(), False))
    e = protos.Event(wall_time=2.0, step=3)
    e.summary.value.add(tag="t", tensor=protos.TensorProto(dtype=1, float_val=[1.0]))
    out.append(("tensor", e.SerializeToString(), False))
    out.append(("session log", protos.Event(wall_time=2.0, step=3, session_log=protos.SessionLog(
        status=protos.SessionLog.START)).SerializeToString(), False))
    out.append(("empty", b"", False))
    plain = _scalar_event(300, 2.5)
    out.append(("step first", plain[9:12] + plain[:9] + plain[12:], False))
    out.append(("unknown field after", plain + b"\x58\x01", False))
    out.append(("wall twice", plain[:9] + plain, False))
    out.append(("non-canonical step", plain[:10] + b"\xac\x82\x00" + plain[12:], True))  # still step 300
    bad_tag = plain.replace(b"loss", b"lo\xffs")
    out.append(("invalid utf-8 tag", bad_tag, False))
    out.append(("value field cut", plain[:-1], False))
    return out


def _parse(data):
    try:
        return protos.Event.FromString(data)
    except Exception:  # noqa: BLE001 - any parse failure
        return None


def _point(event):
    value = event.summary.value[0]
    return value.tag, event.step, event.wall_time, struct.pack("<d", value.simple_value)


@pytest.mark.parametrize("name,data,plain", _variants(), ids=[v[0] for v in _variants()])
def test_scalar_events_decoded_from_bytes_equal_protobufs_parse(tmp_path, name, data, plain):
    path = str(tmp_path / "events.out.tfevents.4.x")
    _write(path, b"".join(frame(data) for _ in range(100)))  # one stretch after the first few
    loader, event = EventFileLoader(path), _parse(data)
    with pytest.warns(DataLossWarning) if event is None else contextlib.nullcontext():
        batch = loader.load_batch()
        events = [e for _, _, e in batch.events()]
    assert (len(batch.scalars) > 50) == plain and (scalar_events.layout(data) is not None) == plain
    fast = batch.scalars
    for i in range(len(fast)):
        point = (fast.tags[fast.tag_ids[i]], int(fast.steps[i]), float(fast.walls[i]),
                 struct.pack("<d", fast.values[i]))
        assert point == _point(event)  # bit for bit, NaN included
    if event is None:
        assert not events and loader.skipped == batch.count
    else:
        assert events == [event] * (batch.count - len(fast))


def test_mutated_scalar_events_decode_as_protobuf_parses_them_or_fall_back(tmp_path):
    rng = random.Random(3)
    path = str(tmp_path / "events.out.tfevents.5.x")
    base = [_scalar_event(s, s / 7, tag) for s, tag in [(3, "loss"), (200, "a/b"), (70_000, "x" * 20)]]
    taken = 0
    for _ in range(150):
        data = bytearray(rng.choice(base))
        for _ in range(rng.randrange(1, 3)):
            data[rng.randrange(len(data))] = rng.choice([rng.randrange(256), 0x80, 0x00, 0x0A, 0x15, 0x2A])
        data = bytes(data)
        _write(path, b"".join(frame(data) for _ in range(100)))
        event = _parse(data)
        with pytest.warns(DataLossWarning) if event is None else contextlib.nullcontext():
            batch = EventFileLoader(path).load_batch()
            events = [e for _, _, e in batch.events()]
        assert events == [event] * (batch.count - len(batch.scalars)) or event is None and not events
        if len(batch.scalars):
            taken += 1
            tag = batch.scalars.tags[batch.scalars.tag_ids[0]]
            assert event is not None and (tag, int(batch.scalars.steps[0]), float(batch.scalars.walls[0]),
                                          struct.pack("<d", batch.scalars.values[0])) == _point(event)
            assert len(event.summary.value) == 1 and event.ListFields()[-1][0].name == "summary"
    assert 20 < taken < 130  # both paths were taken


def _rich_file(path):
    """Scalars (several tags, some equally long), a restart that purges, TF2-style tensor scalars of a tag that
    also has simple values, histograms, text and a graph, as a training run writes them."""
    payloads = [protos.Event(wall_time=1.6e9, file_version="brain.Event:2").SerializeToString()]
    rng = random.Random(5)
    for step in range(600, 1000):  # tags of one length in random order: several tags in one stretch
        payloads.append(_scalar_event(step, step / 3, rng.choice(["lr/a", "lr/b", "lr/c"])))
    for step in range(600):
        payloads += [_scalar_event(step, step * 0.5, "loss"), _scalar_event(step, -step, "acc1")]
        payloads.append(_scalar_event(step, 1.0, "acc2"))
        if step % 97 == 0:
            e = protos.Event(wall_time=1.7e9, step=step)
            v = e.summary.value.add(tag="loss", tensor=protos.TensorProto(dtype=1, float_val=[9.0]))
            v.metadata.plugin_data.plugin_name = "scalars"
            e.summary.value.add(tag="w", histo=protos.HistogramProto(min=0, max=1, num=step, bucket_limit=[1],
                                                                    bucket=[step]))
            payloads.append(e.SerializeToString())
        if step == 400:
            payloads.append(protos.Event(wall_time=1.7e9, step=250, session_log=protos.SessionLog(
                status=protos.SessionLog.START)).SerializeToString())
    payloads.append(protos.Event(wall_time=1.7e9, step=1, graph_def=protos.GraphDef().SerializeToString())
                    .SerializeToString())
    _write(path, b"".join(frame(p) for p in payloads))


def test_a_runs_data_equals_adding_every_event_parsed_by_protobuf(tmp_path):
    (tmp_path / "run").mkdir()
    path = str(tmp_path / "run" / "events.out.tfevents.6.x")
    _rich_file(path)
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    got = logdir.runs["run"]
    want = RunData("run")
    for event in read_events(path):
        want.add(path, 0, event)
    assert sorted(got.scalars) == sorted(want.scalars) == ["acc1", "acc2", "loss", "lr/a", "lr/b", "lr/c"]
    for tag in want.scalars:
        for a, b in zip(got.scalars[tag].arrays(), want.scalars[tag].arrays()):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    assert len(got.scalars["loss"]) == (250 + 3) + (199 + 2)  # points from step 250 on dropped at step 400
    assert [h[:5] for h in got.histograms["w"]] == [h[:5] for h in want.histograms["w"]]
    assert got.first_wall == want.first_wall == 1.6e9 and got.graph is not None
    batch = EventFileLoader(path).load_batch()
    assert len(batch.scalars) > 0.9 * batch.count and len(batch.scalars.tags) == 6  # most took the fast path


def test_scalar_series_hands_out_views_that_stay_valid():
    series = ScalarSeries()
    series.append(0, 1.0, 2.0)
    steps, _, values = series.arrays()
    series.extend(np.arange(1, 1000), np.ones(999), np.zeros(999))  # grows: new arrays
    assert steps.tolist() == [0] and values.tolist() == [2.0] and len(series) == 1000
    version = series.version
    series.purge_from(500)
    assert series.arrays()[0].tolist() == list(range(500)) and series.version > version


def test_smoothing_matches_the_sequential_ema_for_every_weight():
    values = np.random.default_rng(4).normal(size=20_000).cumsum()
    for weight in (0.3, 0.6, 0.99, 0.999):
        last, expected = 0.0, []
        for n, v in enumerate(values, 1):
            last = last * weight + (1 - weight) * v
            expected.append(last / (1 - weight ** n))
        np.testing.assert_allclose(ema(values, weight), expected, rtol=1e-9)


def test_a_waiting_page_is_answered_when_new_data_is_read(tmp_path):
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    api = Api(logdir)
    generation = json.loads(api.runs({})[2])["generation"]
    assert json.loads(api.runs({"after": str(generation), "wait": "0.05"})[2])["runs"] == []  # nothing new
    answer = {}
    waiter = threading.Thread(target=lambda: answer.update(json.loads(
        api.runs({"after": str(generation), "wait": "20"})[2])))
    waiter.start()
    (tmp_path / "new").mkdir()
    _write(tmp_path / "new" / "events.out.tfevents.7.x", frame(_scalar_event(1, 1.0)))
    logdir.reload()
    waiter.join(timeout=10)
    assert answer["generation"] > generation and answer["runs"][0]["scalar_counts"] == {"loss": 1}


def test_the_server_stops_at_once_while_pages_are_connected(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "tensorweave_board.server.cli", "--logdir", str(tmp_path),
                             "--port", "0"], stdout=subprocess.PIPE, text=True,
                            preexec_fn=_ctrl_c_works)
    url = proc.stdout.readline().split(" at ")[1].split()[0]
    idle = http.client.HTTPConnection(url.split("/")[2], timeout=30)  # a browser's kept-alive connection
    try:
        with urllib.request.urlopen(url + "api/runs", timeout=10) as r:
            generation = json.loads(r.read())["generation"]
        waiting = threading.Thread(target=_quietly, args=(f"{url}api/runs?after={generation}&wait=20",), daemon=True)
        waiting.start()
        idle.request("GET", "/api/runs")
        assert idle.getresponse().read()
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=5) == 0
        waiting.join(timeout=5)
    finally:
        idle.close()
        proc.kill()
        proc.wait()
        proc.stdout.close()


def _ctrl_c_works():
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell running the tests in the background ignores it


def _quietly(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            r.read()
    except (OSError, http.client.HTTPException):  # the server went away mid-request or mid-reply, as a page sees
        pass
