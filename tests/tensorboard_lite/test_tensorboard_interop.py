"""Interop with the real tools: TensorBoard's EventAccumulator reads what we write (summaries, graph, run
metadata), our protos match TensorBoard's field for field, and we read tensorboardX / PyTorch-style files."""

import json

import numpy as np
import pytest

import tensorweave as tf
from tensorweave_board import protos, read_events
from tensorweave_board.server.api import Api
from tensorweave_board.server.logdir import Logdir

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                                        reason="the interop tests need the test extra (tensorboard)")


def _write_run(logdir):
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.name_scope("train"):
        tf.summary.scalar("loss", tf.reduce_mean(x))
        tf.summary.histogram("values", x)
    tf.summary.image("img", tf.reshape(x[:12], [1, 2, 2, 3]), max_outputs=1)
    tf.summary.text("note", tf.constant("hello"))
    merged = tf.summary.merge_all()
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(str(logdir), sess.graph)
        for step in range(6):
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if step == 5 else None
            out = sess.run(merged, {x: np.arange(12, dtype=np.float32) + step}, options=options,
                           run_metadata=metadata if step == 5 else None)
            writer.add_summary(out, step)
        writer.add_run_metadata(metadata, "step5", 5)
        writer.close()


def test_event_accumulator_reads_our_files(tmp_path):
    _write_run(tmp_path)
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"scalars": 0, "histograms": 0,
                                                                          "images": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    assert tags["scalars"] == ["train/loss"] and tags["histograms"] == ["train/values"]
    assert tags["images"] == ["img/image"] and tags["tensors"] == ["note"] and tags["graph"]
    assert tags["run_metadata"] == ["step5"]
    assert [(e.step, e.value) for e in acc.Scalars("train/loss")] == [(s, 5.5 + s) for s in range(6)]
    hist = acc.Histograms("train/values")[2].histogram_value
    assert (hist.min, hist.max, hist.num, hist.sum) == (2.0, 13.0, 12.0, sum(range(2, 14)))
    image = acc.Images("img/image")[0]
    assert (image.width, image.height) == (2, 2) and image.encoded_image_string.startswith(b"\x89PNG")
    assert acc.Tensors("note")[0].tensor_proto.string_val == [b"hello"]
    nodes = {n.name: n for n in acc.Graph().node}
    assert nodes["x"].op == "Placeholder" and nodes["x"].attr["dtype"].type == 1
    assert nodes["train/loss"].op == "ScalarSummary"
    stats = acc.RunMetadata("step5").step_stats
    ran = {s.node_name for d in stats.dev_stats for s in d.node_stats}
    assert "train/loss" in ran and "Merge/MergeSummary" in ran


def test_our_protos_match_tensorboards_field_for_field():
    from tensorboard.compat.proto import (config_pb2, event_pb2, graph_pb2, node_def_pb2, step_stats_pb2,
                                          summary_pb2, tensor_pb2)
    pairs = [(protos.Event, event_pb2.Event), (protos.Summary, summary_pb2.Summary),
             (protos.HistogramProto, summary_pb2.HistogramProto), (protos.TensorProto, tensor_pb2.TensorProto),
             (protos.GraphDef, graph_pb2.GraphDef), (protos.NodeDef, node_def_pb2.NodeDef),
             (protos.RunMetadata, config_pb2.RunMetadata), (protos.NodeExecStats, step_stats_pb2.NodeExecStats),
             (protos.SessionLog, event_pb2.SessionLog)]
    checked, seen = 0, set()
    for ours, theirs in pairs:
        stack = [(ours.DESCRIPTOR, theirs.DESCRIPTOR)]
        while stack:
            a, b = stack.pop()
            if a.full_name in seen:  # AttrValue and NameAttrList refer to each other
                continue
            seen.add(a.full_name)
            by_name = {f.name: f for f in b.fields}
            for f in a.fields:
                g = by_name[f.name]
                assert (f.number, f.type, f.is_repeated) == (g.number, g.type, g.is_repeated), f.full_name
                checked += 1
                if f.message_type is not None:
                    stack.append((f.message_type, g.message_type))
    assert checked > 90 and {"tensorflow.AttrValue", "tensorflow.StepStats"} <= seen


def test_we_read_tensorboardx_files(tmp_path):
    tensorboardx = pytest.importorskip("tensorboardX", reason="needs the test extra (tensorboardX)")
    run = tmp_path / "torchlike"
    writer = tensorboardx.SummaryWriter(str(run))
    rng = np.random.default_rng(1)
    for step in range(30):
        writer.add_scalar("loss", 1.0 / (step + 1), step)
        writer.add_scalar("acc/train", step / 30, step)
        writer.add_histogram("weights/w1", rng.normal(size=500), step)
    writer.add_text("note", "from tensorboardX", 0)
    writer.add_image("sample", rng.integers(0, 255, size=(3, 4, 5), dtype=np.uint8), 0)
    writer.close()
    files = list(run.iterdir())
    events = read_events(str(files[0]))
    losses = [(e.step, v.simple_value) for e in events for v in e.summary.value if v.tag == "loss"]
    assert losses == [(s, pytest.approx(1.0 / (s + 1))) for s in range(30)]
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    data = logdir.runs["torchlike"]
    assert sorted(data.scalars) == ["acc/train", "loss"] and len(data.scalars["loss"]) == 30
    assert len(data.histograms["weights/w1"]) == 30 and data.histograms["weights/w1"][0][4] == 500
    assert "from tensorboardX" in data.texts["note/text_summary"][0][2]  # tensorboardX adds the suffix
    status, kind, png = Api(logdir).image({"run": "torchlike", "tag": "sample", "index": "0"})
    assert status == 200 and png.startswith(b"\x89PNG")


def test_we_read_pytorch_summary_writer_files(tmp_path):
    tensorboard_module = pytest.importorskip("torch.utils.tensorboard", reason="PyTorch is not installed")
    writer = tensorboard_module.SummaryWriter(str(tmp_path / "pt"))
    for step in range(20):
        writer.add_scalar("train/loss", 2.0 - step * 0.05, step)
    writer.add_histogram("w", np.linspace(-1, 1, 101), 3)
    writer.close()
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    api = Api(logdir)
    data = json.loads(api.scalars({"run": "pt", "tag": "train/loss"})[2])
    assert data["step"] == list(range(20)) and data["value"] == pytest.approx([2.0 - s * 0.05 for s in range(20)])
    hist = json.loads(api.histograms({"run": "pt", "tag": "w"})[2])["histograms"]
    assert [(h["step"], h["num"], h["min"], h["max"]) for h in hist] == [(3, 101, -1.0, 1.0)]
