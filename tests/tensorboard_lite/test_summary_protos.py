"""Logging Python values as TF1 programs do: ``writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag=...,
simple_value=...)]), step)``. The event file is read by the dashboard and by TensorBoard's EventAccumulator; an
event file TensorFlow wrote the same way (tests/fixtures/tf1/make_records.py) is read here; and TF read the one
this code wrote into the values meant."""

import importlib.util
import json

import pytest
from tf1_records import FILES, TF1, as_bytes

import tensorweave as tf
from tensorweave.records import RecordIterator
from tensorweave_board import protos, read_events
from tensorweave_board.server.api import Api
from tensorweave_board.server.logdir import Logdir

_spec = importlib.util.spec_from_file_location("records_files", FILES.parent / "records_files.py")
records_files = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(records_files)
SCALARS = records_files.SCALARS  # (tag, step, value), written by TF and by us


def _series(scalars):
    out = {}
    for tag, step, value in scalars:
        out.setdefault(tag, []).append((step, value))
    return out


def test_the_core_protos_are_tf_summary_and_the_dashboards():
    assert tf.Summary is tf.summary.Summary is protos.Summary and tf.Event is protos.Event
    assert tf.Summary.Value is protos.Summary.Value and tf.SessionLog is tf.summary.SessionLog


def test_hand_built_summaries_read_by_the_dashboard(tmp_path):
    """FileWriter.add_summary of hand-built tf.Summary protos: the dashboard's reader, its scalars API and
    tf.train.summary_iterator all see the values written."""
    run = tmp_path / "run"
    run.mkdir()
    path = records_files.write_event_file(run)
    events = read_events(path)
    assert events[0].file_version == "brain.Event:2"
    assert [(v.tag, e.step, v.simple_value) for e in events[1:] for v in e.summary.value] == SCALARS
    assert [(v.tag, e.step, v.simple_value) for e in tf.train.summary_iterator(path) for v in e.summary.value] == \
        SCALARS
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    api = Api(logdir)
    for tag, points in _series(SCALARS).items():
        data = json.loads(api.scalars({"run": "run", "tag": tag})[2])
        assert list(zip(data["step"], data["value"])) == points


def test_hand_built_summaries_read_by_tensorboard(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                                            reason="needs the test extra (tensorboard)")
    records_files.write_event_file(tmp_path)
    accumulator = event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    assert sorted(accumulator.Tags()["scalars"]) == sorted(_series(SCALARS))
    for tag, points in _series(SCALARS).items():
        assert [(e.step, e.value) for e in accumulator.Scalars(tag)] == points


def test_an_event_file_tensorflow_wrote_is_read_here():
    want = TF1["events/tf_file_writer"]
    path = next((FILES / "events").iterdir())
    events = read_events(str(path))
    assert events[0].file_version == want["file_version"]
    assert [[v.tag, e.step, v.simple_value] for e in events[1:] for v in e.summary.value] == want["scalars"]
    ours = [tf.Summary(value=[tf.Summary.Value(tag=t, simple_value=v)]).SerializeToString() for t, _, v in SCALARS]
    assert ours == as_bytes(want["summaries"])
    logdir = Logdir(str(FILES.parent))
    logdir.reload()
    assert sorted(logdir.runs["records/events"].scalars) == sorted(_series(SCALARS))


def test_the_event_file_written_here_was_read_by_tensorflow(tmp_path):
    """TF's summary_iterator read the committed file (written by records_files.py) into SCALARS, and this code
    still writes the same summaries."""
    assert [tuple(s) for s in TF1["tensorweave_written/tw_events"]["scalars"]] == SCALARS
    committed = next((FILES / "tw_events").iterdir())
    fresh = records_files.write_event_file(tmp_path)
    summaries = [[protos.Event.FromString(r).summary for r in RecordIterator(p)][1:] for p in (committed, fresh)]
    assert summaries[0] == summaries[1]


def test_add_summary_takes_the_proto_its_bytes_or_a_summary_op_value(tmp_path):
    loss = tf.placeholder(tf.float32, [])
    op = tf.summary.scalar("op_loss", loss)
    writer = tf.summary.FileWriter(str(tmp_path))
    with tf.Session() as sess:
        writer.add_summary(sess.run(op, {loss: 1.5}), 1)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="py_loss", simple_value=2.5)]), 1)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="bytes_loss", simple_value=3.5)]).SerializeToString(), 2)
    writer.close()
    events = read_events(writer.event_writer.path)
    assert [(v.tag, e.step, v.simple_value) for e in events[1:] for v in e.summary.value] == [
        ("op_loss", 1, 1.5), ("py_loss", 1, 2.5), ("bytes_loss", 2, 3.5)]
