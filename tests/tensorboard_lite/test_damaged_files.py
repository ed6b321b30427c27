"""Damage the reader must survive without unbounded memory or a log line every reload: a record whose
length field cannot be right (longer than any event can be, with a length checksum that matches) is
corruption at a named byte, never a tail still being written, and its claimed length is never allocated;
a long record that is really being written is read once the file holds it; a file that cannot be read is
reported once and read again when it can."""

import contextlib
import logging
import os
import struct
import tracemalloc

import numpy as np
import pytest

from tensorweave_board import FileWriter, protos
from tensorweave_board.event_reader import EventFileLoader
from tensorweave_board.images import encode_png
from tensorweave_board.record_io import DataLossWarning, RecordReader, frame, masked_crc, read_record_at
from tensorweave_board.server.api import Api, NotFound
from tensorweave_board.server.logdir import Logdir


def _header(length):
    raw = struct.pack("<Q", length)
    return raw + struct.pack("<I", masked_crc(raw))


def _scalar_event(step, value):
    event = protos.Event(wall_time=1.7e9 + step, step=step)
    event.summary.value.add(tag="loss", simple_value=value)
    return event.SerializeToString()


def _write(path, records, tail=b""):
    with open(path, "wb") as f:
        f.write(b"".join(frame(r) for r in records) + tail)


@contextlib.contextmanager
def _allocating_at_most(mb):
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()
    assert peak < mb


@pytest.mark.parametrize("claim", [1 << 31, 1 << 62, (1 << 64) - 1])
@pytest.mark.parametrize("chunk", [None, 256])  # the record first in a block bigger than a block, or not
def test_an_impossible_length_is_corruption_at_its_byte(tmp_path, monkeypatch, claim, chunk):
    if chunk:
        monkeypatch.setattr(RecordReader, "CHUNK", chunk)
    path = str(tmp_path / "events.out.tfevents.1.host")
    good = [_scalar_event(step, float(step)) for step in range(20)]
    at = sum(len(frame(r)) for r in good)
    _write(path, good, _header(claim) + b"\x00" * (8 << 10))
    loader = EventFileLoader(path)

    def read_all():
        with pytest.warns(DataLossWarning, match=f"corrupted record at byte {at} "):
            while loader.load_batch().count:
                pass
        assert loader.load_batch().count == 0  # and it stays where it stopped

    with _allocating_at_most(32):  # (the claimed length was 2 GB or more)
        read_all()
    assert loader.state == "corrupt" and loader.offset == at
    assert f"says {claim:,} bytes" in loader.error and "2 GiB" in loader.error


def test_the_dashboard_lists_it_as_corrupt_and_keeps_serving(tmp_path, caplog):
    run = tmp_path / "r"
    run.mkdir()
    _write(str(run / "events.out.tfevents.1.host"), [_scalar_event(0, 1.0)], _header(1 << 62) + b"\x00" * 64)
    logdir = Logdir(str(tmp_path))
    with pytest.warns(DataLossWarning):
        logdir.reload()
    for _ in range(3):
        logdir.reload()
    [entry] = logdir.files()
    assert entry["state"] == "corrupt" and "at byte " in entry["error"]
    assert len([r for r in caplog.records if "corrupted record" in r.getMessage()]) == 1  # once, not each reload
    assert not [r for r in caplog.records if "MemoryError" in r.getMessage()]
    assert Api(logdir).handle("scalars", {"run": "r", "tag": "loss"})[0] == 200


def test_a_long_record_still_being_written_is_read_without_reading_ahead_of_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(RecordReader, "CHUNK", 4096)
    path = str(tmp_path / "events.out.tfevents.1.host")
    big = protos.Event(step=1, file_version="x" * (24 << 20)).SerializeToString()  # 24 MB, half written
    record = frame(big)
    _write(path, [], record[:len(record) // 2])
    reader = RecordReader(path)
    with _allocating_at_most(16):
        reader.read_block()
    assert reader.state == "incomplete" and reader.offset == 0
    with open(path, "ab") as f:
        f.write(record[len(record) // 2:])
    offsets, records = reader.read_columns()
    assert offsets == [0] and records == [big] and reader.state == "ok"


@pytest.mark.parametrize("claim", [1 << 62, 1 << 30])  # impossible; possible but longer than the file
def test_a_payload_read_on_demand_never_allocates_a_claimed_length(tmp_path, claim):
    path = str(tmp_path / "f")
    _write(path, [b"x" * 10], _header(claim) + b"\x00" * 64)
    assert read_record_at(path, 0) == b"x" * 10
    with _allocating_at_most(16), pytest.raises(ValueError, match="at byte 26 "):
        read_record_at(path, 26)


def test_an_image_whose_file_was_replaced_is_not_found(tmp_path):
    with FileWriter(str(tmp_path / "r")) as w:
        s = protos.Summary()
        v = s.value.add(tag="img")
        v.image.height, v.image.width, v.image.colorspace = 1, 1, 1
        v.image.encoded_image_string = encode_png(np.zeros((1, 1, 1), np.uint8))
        w.add_summary(s, 0)
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    api = Api(logdir)
    assert api.handle("image", {"run": "r", "tag": "img", "index": "0"})[1] == "image/png"
    [path] = [os.path.join(tmp_path, "r", f) for f in os.listdir(tmp_path / "r")]
    blob = logdir.runs["r"].images["img"][0]
    with open(path, "r+b") as f:  # rewritten under the server: an impossible length where the image was
        f.seek(blob.offset)
        f.write(_header(1 << 62))
    with pytest.raises(NotFound, match="no longer readable.*at byte"):
        api.handle("image", {"run": "r", "tag": "img", "index": "0"})
    os.remove(path)
    with pytest.raises(NotFound, match="no longer readable"):
        api.handle("image", {"run": "r", "tag": "img", "index": "0"})


def test_a_file_that_cannot_be_read_is_reported_once_and_read_again_when_it_can(tmp_path, caplog):
    run = tmp_path / "r"
    run.mkdir()
    path = run / "events.out.tfevents.1.host"
    _write(str(path), [_scalar_event(0, 1.0)])
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    os.rename(path, tmp_path / "kept")
    path.mkdir()  # (a file that cannot be opened for reading, whoever runs the test)
    with caplog.at_level(logging.WARNING, "tensorweave_board"):
        for _ in range(3):
            logdir.reload()
    [entry] = logdir.files()
    assert entry["state"] == "unreadable" and "cannot be read" in entry["error"]
    assert len(caplog.records) == 1 and "cannot be read" in caplog.records[0].getMessage()
    path.rmdir()
    _write(str(path), [_scalar_event(0, 1.0), _scalar_event(1, 2.0)])
    logdir.reload()
    assert logdir.files()[0]["state"] == "ok" and logdir.files()[0]["error"] is None
    assert logdir.runs["r"].scalars["loss"].arrays()[2].tolist() == [1.0, 2.0]


def test_an_error_reading_a_file_is_logged_once_however_often_it_recurs(tmp_path, caplog, monkeypatch):
    run = tmp_path / "r"
    run.mkdir()
    _write(str(run / "events.out.tfevents.1.host"), [_scalar_event(0, 1.0)])
    logdir = Logdir(str(tmp_path))

    def fail(self):
        raise RuntimeError("something no one foresaw")

    monkeypatch.setattr(EventFileLoader, "load_batch", fail)
    with caplog.at_level(logging.WARNING, "tensorweave_board"):
        for _ in range(3):
            logdir.reload()
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == ["RuntimeError: something no one foresaw"]
