"""TFRecord files and tf.train.Example protos, both ways with real TensorFlow (tests/fixtures/tf1/make_records.py):
files TF wrote (plain, GZIP, ZLIB; damaged on purpose) read here with TF's records and errors, files written here
byte for byte as TF writes them, and the files Tensorweave wrote read by TF into the values meant."""

import gzip
import importlib.util
import zlib

import numpy as np
import pytest
from tf1_records import FILES, TF1, as_bytes, assert_error

import tensorweave as tf
from tensorweave.protos.framework import TensorProto, TensorShapeProto
from tensorweave.records import LineIterator, RecordIterator, RecordWriter
from tensorweave.records.format import frame

ITERATE = sorted(k for k in TF1 if k.startswith("iterate/") and "/damaged/" not in k and k != "iterate/missing")
DAMAGED = sorted(k for k in TF1 if k.startswith("iterate/damaged/"))
_spec = importlib.util.spec_from_file_location("records_files", FILES.parent / "records_files.py")
records_files = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(records_files)


def iterate(path, options=None):
    try:
        return {"records": list(tf.python_io.tf_record_iterator(str(path), options))}
    except tf.errors.OpError as e:
        return {"error": type(e).__name__, "message": str(e), "at": "run"}


def assert_iterated(got, case):
    want = TF1[case]
    if "error" in want:
        assert_error(got, want, case)
    else:
        assert got == {"records": as_bytes(want["records"])}, case


@pytest.mark.parametrize("name", ITERATE)
def test_tf_record_iterator_reads_tf1_files(name):
    case = TF1[name]
    assert_iterated(iterate(FILES / case["file"], case["options"]), name)


@pytest.mark.parametrize("name", DAMAGED)
def test_damaged_files_fail_where_tf1_fails(name, tmp_path):
    data = bytearray((FILES / "examples.tfrecord").read_bytes())
    edit = TF1[name]["edit"]
    if "flip" in edit:
        data[edit["flip"]] ^= 0x40
    else:
        data = data[:edit["cut"]]
    (tmp_path / "damaged.tfrecord").write_bytes(bytes(data))
    assert_iterated(iterate(tmp_path / "damaged.tfrecord"), name)


def test_a_missing_file_is_not_found(tmp_path):
    got = iterate(tmp_path / "no-such-file.tfrecord")
    assert got["error"] == TF1["iterate/missing"]["error"] == "NotFoundError"
    assert got["message"].startswith(f"{tmp_path / 'no-such-file.tfrecord'}; No such file or directory")


def test_the_records_before_damage_come_first(tmp_path):
    data = bytearray((FILES / "examples.tfrecord").read_bytes())
    data[103 + 14] ^= 0x40  # the second record's data
    (tmp_path / "d.tfrecord").write_bytes(bytes(data))
    records = tf.python_io.tf_record_iterator(str(tmp_path / "d.tfrecord"))
    assert next(records) == as_bytes(TF1["iterate/examples.tfrecord/None"]["records"][0])
    with pytest.raises(tf.errors.DataLossError, match=r"corrupted record at 115 in .*d.tfrecord"):
        next(records)


@pytest.mark.parametrize("name, compression", [("examples.tfrecord", None), ("examples.tfrecord.gz", "GZIP"),
                                               ("examples.tfrecord.zz", "ZLIB")])
def test_written_here_as_tf1_wrote_it(name, compression, tmp_path):
    """The same records make the same file: the framing byte for byte, compressed streams inflating to it."""
    records = as_bytes(TF1[f"iterate/{name}/{compression}"]["records"])
    with tf.io.TFRecordWriter(str(tmp_path / name), tf.io.TFRecordOptions(compression)) as writer:
        for record in records:
            writer.write(record)
    ours, theirs = (tmp_path / name).read_bytes(), (FILES / name).read_bytes()
    inflate = {None: bytes, "GZIP": gzip.decompress, "ZLIB": zlib.decompress}[compression]
    assert inflate(ours) == inflate(theirs) == b"".join(frame(r) for r in records)


def test_files_written_here_are_read_by_tf1_as_meant(tmp_path):
    """TF read the committed tw_* files (written by records_files.py here) into the EXAMPLES' values, and this
    code still writes those files."""
    records_files.write_record_files(tmp_path)
    for name, compression in records_files.COMPRESSIONS.items():
        assert list(RecordIterator(tmp_path / name, compression)) == list(RecordIterator(FILES / name, compression))
        parsed = TF1[f"tensorweave_written/{name}"]["parsed"]
        assert parsed["label"]["value"] == [c["label"] for c in records_files.EXAMPLES]
        np.testing.assert_array_equal(np.float32(parsed["pixels"]["value"]),
                                      np.float32([c["pixels"] for c in records_files.EXAMPLES]))
        assert as_bytes(parsed["name"]["value"]) == [c["name"] for c in records_files.EXAMPLES]
        tags = parsed["tags"]
        assert as_bytes(tags["values"]) == [t for c in records_files.EXAMPLES for t in c["tags"]]
        assert tags["indices"] == [[i, j] for i, c in enumerate(records_files.EXAMPLES) for j in range(len(c["tags"]))]
    assert (tmp_path / "tw_sequence.tfrecord").read_bytes() == (FILES / "tw_sequence.tfrecord").read_bytes()
    for (context, lists), content in zip(TF1["tensorweave_written/tw_sequence.tfrecord"]["parsed"],
                                         records_files.SEQUENCES):
        assert context["length"]["value"] == content["length"]
        assert lists["tokens"]["value"] == [t[0] for t in content["tokens"]]
        assert lists["weights"]["values"] == [w for step in content["weights"] for w in step]


def test_protos_serialize_as_tf1s():
    """Examples, SequenceExamples, Summaries and Events built here are TF's bytes (deterministic serialization)."""
    feature = tf.train.Feature
    example = tf.train.Example(features=tf.train.Features(feature={
        "f": feature(float_list=tf.train.FloatList(value=[1.5, -2.0])),
        "i": feature(int64_list=tf.train.Int64List(value=[1, -(2 ** 62)])),
        "b": feature(bytes_list=tf.train.BytesList(value=[b"x", b"\x00\xff"])), "e": feature()}))
    assert example.SerializeToString(deterministic=True) == as_bytes(TF1["proto/example"]["bytes"])
    sequence = tf.train.SequenceExample(
        context=tf.train.Features(feature={"c": feature(int64_list=tf.train.Int64List(value=[3]))}),
        feature_lists=tf.train.FeatureLists(feature_list={"l": tf.train.FeatureList(feature=[
            feature(float_list=tf.train.FloatList(value=[1.0])), feature(float_list=tf.train.FloatList())])}))
    assert sequence.SerializeToString(deterministic=True) == as_bytes(TF1["proto/sequence_example"]["bytes"])
    tensor = TensorProto(dtype=1, tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=2)]),
                         tensor_content=np.float32([1.5, 2.5]).tobytes())
    summary = tf.Summary(value=[
        tf.Summary.Value(tag="loss", simple_value=0.25),
        tf.Summary.Value(tag="h", histo=tf.HistogramProto(min=0, max=2, num=3, sum=3, sum_squares=5,
                                                          bucket_limit=[1, 2], bucket=[1, 2])),
        tf.Summary.Value(tag="img", image=tf.Summary.Image(height=1, width=2, colorspace=3,
                                                           encoded_image_string=b"\x89PNG")),
        tf.Summary.Value(tag="t", metadata=tf.SummaryMetadata(display_name="d"), tensor=tensor)])
    assert summary.SerializeToString(deterministic=True) == as_bytes(TF1["proto/summary"]["bytes"])
    event = tf.Event(wall_time=1.5, step=3, summary=summary)
    assert event.SerializeToString(deterministic=True) == as_bytes(TF1["proto/event"]["bytes"])
    log = tf.Event(step=1, session_log=tf.SessionLog(status=tf.SessionLog.START))
    assert log.SerializeToString(deterministic=True) == as_bytes(TF1["proto/session_log"]["bytes"])
    assert tf.train.Example.FromString(as_bytes(TF1["proto/example"]["bytes"])) == example


def test_writer_errors_as_tf1(tmp_path):
    with tf.python_io.TFRecordWriter(str(tmp_path / "s.tfrecord")) as writer:
        writer.write("text é")
    assert list(tf.python_io.tf_record_iterator(str(tmp_path / "s.tfrecord"))) == \
        as_bytes(TF1["writer/str_record"]["result"])
    with pytest.raises(TypeError), tf.python_io.TFRecordWriter(str(tmp_path / "i.tfrecord")) as writer:
        writer.write(5)
    assert TF1["writer/int_record"]["error"] == "TypeError"
    writer = tf.python_io.TFRecordWriter(str(tmp_path / "c.tfrecord"))
    writer.close()
    with pytest.raises(tf.errors.FailedPreconditionError, match=TF1["writer/after_close"]["message"]):
        writer.write(b"x")
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.python_io.TFRecordWriter(str(tmp_path / "no" / "x.tfrecord"))
    assert TF1["writer/missing_folder"]["error"] == "NotFoundError"


def test_a_flushed_compressed_file_reads_back_up_to_the_flush(tmp_path):
    writer = tf.python_io.TFRecordWriter(str(tmp_path / "f.tfrecord.gz"), "GZIP")
    writer.write(b"one")
    writer.flush()
    assert TF1["writer/flushed_gzip_not_empty"]["result"] is True
    assert list(RecordIterator(tmp_path / "f.tfrecord.gz", "GZIP")) == [b"one"]
    writer.write(b"two")
    writer.close()
    assert list(RecordIterator(tmp_path / "f.tfrecord.gz", "GZIP")) == [b"one", b"two"]


def test_options_as_tf1():
    get = tf.python_io.TFRecordOptions.get_compression_type_string
    assert [get(None), get(""), get("GZIP"), get("ZLIB"), get(0), get(1), get(2),
            get(tf.python_io.TFRecordOptions("ZLIB")), get(tf.python_io.TFRecordOptions(None))] == \
        TF1["options/strings"]["result"]
    kinds = tf.python_io.TFRecordCompressionType
    assert [kinds.NONE, kinds.ZLIB, kinds.GZIP] == TF1["options/kinds"]["result"]
    for bad, case in (("BAD", "options/bad_type"), ("LZ4", "options/bad_string")):
        with pytest.raises(ValueError, match=TF1[case]["message"]):
            tf.python_io.TFRecordOptions(bad) if bad == "BAD" else get(bad)


def test_record_writer_takes_a_file_object_and_a_reader_its_offsets(tmp_path):
    with open(tmp_path / "r.tfrecord", "wb") as f:
        writer = RecordWriter(f)
        for record in (b"a", b"", b"ccc"):
            writer.write(record)
        writer.flush()
    records = RecordIterator(tmp_path / "r.tfrecord")
    assert [(r, records.record_offset) for r in records] == [(b"a", 0), (b"", 17), (b"ccc", 33)]
    assert records.offset == 52


def test_line_iterator_splits_lines_as_tf1s_text_line_reader(tmp_path):
    """The lines TF's TextLineReader read from lines.txt; the same from a GZIP copy; empty and unterminated files."""
    want = [as_bytes(row[1]) for row in TF1["reader/text_lines"]["rows"] if row[0].startswith("lines.txt")]
    assert list(LineIterator(FILES / "lines.txt")) == want == [b"head", b"x\ry", b"", b"last"]
    (tmp_path / "lines.txt.gz").write_bytes(gzip.compress((FILES / "lines.txt").read_bytes()))
    lines = LineIterator(tmp_path / "lines.txt.gz", "GZIP")
    assert [(line, lines.line_number) for line in lines] == [(w, i + 1) for i, w in enumerate(want)]
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "open").write_bytes(b"a\r\nb\r")
    assert list(LineIterator(tmp_path / "empty")) == [] and list(LineIterator(tmp_path / "open")) == [b"a", b"b"]
    with pytest.raises(tf.errors.NotFoundError, match="missing; No such file or directory"):
        LineIterator(tmp_path / "missing")
