"""Event files: TFRecord framing with masked CRC32C, FileWriter round trips, background writing, and
reading truncated, corrupted and growing files up to their last good record."""

import os
import struct
import warnings

import pytest

from tensorweave_board import FileWriter, protos, read_events
from tensorweave_board.event_reader import EventFileLoader
from tensorweave_board.record_io import DataLossWarning, RecordReader, frame, masked_crc, read_record_at


def _event_file(logdir):
    files = [f for f in os.listdir(logdir) if "tfevents" in f]
    assert len(files) == 1, files
    return os.path.join(logdir, files[0])


def _scalar_summary(tag, value):
    s = protos.Summary()
    s.value.add(tag=tag, simple_value=value)
    return s


def test_masked_crc_matches_tensorflow():
    # CRC32C("123456789") = 0xE3069283 (the standard check value), then rotated right by 15 and offset.
    crc = 0xE3069283
    assert masked_crc(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    record = frame(b"abc")
    assert struct.unpack("<Q", record[:8])[0] == 3 and record[12:15] == b"abc" and len(record) == 19
    assert struct.unpack("<I", record[8:12])[0] == masked_crc(record[:8])
    assert struct.unpack("<I", record[15:])[0] == masked_crc(b"abc")


def test_file_writer_round_trip(tmp_path):
    with FileWriter(str(tmp_path)) as writer:
        for step in range(5):
            writer.add_summary(_scalar_summary("loss", 1.0 / (step + 1)), global_step=step)
        writer.add_summary(_scalar_summary("acc", 0.5).SerializeToString(), global_step=7)  # bytes, as fetched
        writer.add_session_log(protos.SessionLog(status=protos.SessionLog.CHECKPOINT, checkpoint_path="m"), 7)
    events = read_events(_event_file(tmp_path))
    assert events[0].file_version == "brain.Event:2"
    scalars = [(e.step, v.tag, v.simple_value) for e in events for v in e.summary.value]
    assert scalars == [(s, "loss", pytest.approx(1.0 / (s + 1))) for s in range(5)] + [(7, "acc", 0.5)]
    assert events[-1].session_log.checkpoint_path == "m" and events[-1].step == 7
    assert all(e.wall_time > 1.6e9 for e in events)


def test_metadata_is_written_with_a_tags_first_value_only(tmp_path):
    with FileWriter(str(tmp_path)) as writer:
        for step in range(3):
            s = protos.Summary()
            v = s.value.add(tag="note")
            v.metadata.plugin_data.plugin_name = "text"
            v.tensor.dtype = 7
            v.tensor.string_val.append(b"hi")
            writer.add_summary(s, step)
    values = [v for e in read_events(_event_file(tmp_path)) for v in e.summary.value]
    assert [v.HasField("metadata") for v in values] == [True, False, False]


def test_background_writer_flushes_on_demand_and_raises_when_closed(tmp_path):
    writer = FileWriter(str(tmp_path), flush_secs=3600, max_queue=2)
    for step in range(20):  # more than max_queue: the producer waits for the writing thread
        writer.add_summary(_scalar_summary("x", step), step)
    writer.flush()
    assert len(read_events(_event_file(tmp_path))) == 21
    writer.close()
    writer.close()
    with pytest.raises(ValueError, match="closed; call reopen"):
        writer.add_summary(_scalar_summary("x", 0.0), 0)
    writer.reopen()
    writer.add_summary(_scalar_summary("x", 1.0), 1)
    writer.close()
    assert len([f for f in os.listdir(tmp_path) if "tfevents" in f]) == 2  # reopen starts a new file


def test_two_writers_in_one_second_never_share_a_file(tmp_path):
    a, b = FileWriter(str(tmp_path)), FileWriter(str(tmp_path))
    a.close()
    b.close()
    assert a.event_writer.path != b.event_writer.path


def test_run_metadata_tags_must_be_unique(tmp_path):
    with FileWriter(str(tmp_path)) as writer:
        writer.add_run_metadata(protos.RunMetadata(), "step1", 1)
        with pytest.raises(ValueError, match="already used"):
            writer.add_run_metadata(protos.RunMetadata(), "step1", 2)


def _write_three(tmp_path):
    with FileWriter(str(tmp_path)) as writer:
        for step in range(3):
            writer.add_summary(_scalar_summary("loss", float(step)), step)
    return _event_file(tmp_path)


def test_truncated_file_reads_up_to_its_last_complete_record(tmp_path):
    path = _write_three(tmp_path)
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-7])  # the writer died inside the last record
    with pytest.warns(DataLossWarning, match="ends inside a record"):
        events = read_events(path)
    assert [v.simple_value for e in events for v in e.summary.value] == [0.0, 1.0]


@pytest.mark.parametrize("where", ["length", "data"])
def test_corrupted_record_is_reported_and_the_records_before_it_are_kept(tmp_path, where):
    path = _write_three(tmp_path)
    reader = RecordReader(path)
    offsets = [off for off, _ in reader.read()]
    data = bytearray(open(path, "rb").read())
    data[offsets[2] + (2 if where == "length" else 14)] ^= 0xFF  # the third of four records
    open(path, "wb").write(bytes(data))
    loader = EventFileLoader(path)
    with pytest.warns(DataLossWarning, match=f"corrupted record at byte {offsets[2]}"):
        events = loader.load()
    assert loader.state == "corrupt" and f"the {where}'s checksum does not match" in loader.error
    assert [v.simple_value for _, e in events for v in e.summary.value] == [0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert loader.load() == []  # warned once; the rest of the file stays skipped
    with pytest.raises(ValueError, match="corrupted record"):
        read_record_at(path, offsets[2])


def test_a_growing_file_is_tailed_record_by_record(tmp_path):
    path = str(tmp_path / "events.out.tfevents.1.host")
    records = [frame(protos.Event(step=i, file_version="x").SerializeToString()) for i in range(3)]
    loader = EventFileLoader(path)
    with open(path, "wb") as f:
        f.write(records[0] + records[1][:5])
        f.flush()
        assert [e.step for _, e in loader.load()] == [0] and loader.state == "incomplete"
        f.write(records[1][5:] + records[2][:-1])
        f.flush()
        assert [e.step for _, e in loader.load()] == [1] and loader.state == "incomplete"
        f.write(records[2][-1:])
        f.flush()
        assert [e.step for _, e in loader.load()] == [2] and loader.state == "ok"
    assert loader.load() == []


def test_a_record_that_is_not_an_event_is_skipped_with_a_warning(tmp_path):
    path = str(tmp_path / "events.out.tfevents.2.host")
    with open(path, "wb") as f:
        f.write(frame(b"\xff\xff\xff") + frame(protos.Event(step=4).SerializeToString()))
    with pytest.warns(DataLossWarning, match="not an Event"):
        assert [e.step for e in read_events(path)] == [4]
