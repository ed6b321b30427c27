"""Reading records back from Python as TF1 programs do (tests/fixtures/tf1/make_record_strings.py): the Events of
the event files TF and Tensorweave wrote through tf.train.summary_iterator, and the tf.compat string helpers
that programs build Example features with; TF's values, types and messages."""

import pytest
from tf1_fixtures import FOLDER, load

import tensorweave as tf

TF1 = load("record_strings")
FILES = FOLDER / "records"
INPUTS = {"str": "héllo", "bytes": b"h\xc3\xa9llo", "bytearray": bytearray(b"ab\x00"), "int": 7, "none": None,
          "float": 1.5, "list": ["a"]}
ERRORS = {"TypeError": TypeError, "LookupError": LookupError, "UnicodeDecodeError": UnicodeDecodeError,
          "NotFoundError": tf.errors.NotFoundError, "DataLossError": tf.errors.DataLossError}


def _events(path):
    out = []
    for event in tf.train.summary_iterator(str(path)):
        kind = event.WhichOneof("what")
        values = [[v.tag, v.simple_value] for v in event.summary.value] if kind == "summary" else None
        out.append({"wall_time": event.wall_time, "step": event.step, "what": kind,
                    "file_version": event.file_version, "values": values})
    return out


def _check(want, fn, *args, **kwargs):
    if "error" in want:
        with pytest.raises(ERRORS[want["error"]]) as caught:
            fn(*args, **kwargs)
        assert str(caught.value).replace(str(FILES), "<records>") == want["message"]
    else:
        got = fn(*args, **kwargs)
        assert type(got).__name__ == want["type"]
        assert (list(got) if isinstance(got, bytes) else got) == want["value"]


@pytest.mark.parametrize("folder", ["events", "tw_events"])
def test_summary_iterator_reads_the_events_tf_read(folder):
    assert _events(next((FILES / folder).iterdir())) == TF1[f"summary_iterator/{folder}"]


def test_summary_iterator_opens_the_file_at_the_first_next():
    events = tf.train.summary_iterator(str(FILES / "no_such_file"))  # TF 1.15: a generator, nothing opened yet
    _check(TF1["summary_iterator/missing"], next, events)


def test_summary_iterator_reads_hand_built_events_and_stops_at_a_damaged_record(tmp_path):
    """Events written with TFRecordWriter alone (no dashboard package): read back in order; a checksum broken
    in the last record fails there, after the records before it."""
    path = tmp_path / "events.out.tfevents.1.host"
    with tf.python_io.TFRecordWriter(str(path)) as writer:
        writer.write(tf.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())
        for step in range(3):
            summary = tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=1.0 / (step + 1))])
            writer.write(tf.Event(wall_time=2.0 + step, step=step, summary=summary).SerializeToString())
    assert [(e.step, [v.simple_value for v in e.summary.value]) for e in tf.train.summary_iterator(str(path))] == [
        (0, []), (0, [1.0]), (1, [0.5]), (2, pytest.approx([1 / 3]))]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the last record's data checksum
    path.write_bytes(bytes(data))
    events = tf.train.summary_iterator(str(path))
    assert [next(events).step for _ in range(3)] == [0, 0, 1]
    with pytest.raises(tf.errors.DataLossError, match="corrupted record"):
        next(events)


@pytest.mark.parametrize("fn", ["as_bytes", "as_text", "as_str", "as_str_any"])
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_compat_string_helpers_as_tf(fn, name):
    _check(TF1[f"compat/{fn}/{name}"], getattr(tf.compat, fn), INPUTS[name])


def test_compat_string_helpers_take_an_encoding_as_tf():
    _check(TF1["compat/as_bytes/latin-1"], tf.compat.as_bytes, "é", encoding="latin-1")
    _check(TF1["compat/as_text/latin-1"], tf.compat.as_text, b"\xe9", encoding="latin-1")
    _check(TF1["compat/as_text/bad-utf-8"], tf.compat.as_text, b"\xe9")
    _check(TF1["compat/as_bytes/unknown-encoding"], tf.compat.as_bytes, "a", encoding="no-such-codec")
    assert tf.compat.v1.compat.as_bytes is tf.compat.as_bytes


def test_a_feature_built_with_as_bytes_is_tfs_bytes_list():
    feature = tf.train.Feature(bytes_list=tf.train.BytesList(value=[tf.compat.as_bytes("héllo")]))
    assert feature.SerializeToString() == b"\n\x08\n\x06h\xc3\xa9llo"
