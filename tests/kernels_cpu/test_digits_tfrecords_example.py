"""examples/digits_tfrecords.py, the TF1-style program that writes TFRecord files of tf.train.Example protos and
trains from them through tf.data with tf.app flags and tf.logging, runs and learns; its files read back."""

import glob
import os
import re
import subprocess
import sys

import pytest

import tensorweave as tf

pytest.importorskip("sklearn", reason="the digits examples need the examples extra: pip install tensorweave[examples]")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "digits_tfrecords.py")


def _run(tmp_path, *flags):
    out = subprocess.run([sys.executable, EXAMPLE, f"--data_dir={tmp_path / 'data'}", f"--logdir={tmp_path / 'run'}",
                          *flags], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out


def test_the_example_writes_records_trains_from_them_and_reads_them_again(tmp_path):
    first = _run(tmp_path, "--epochs=4")
    assert "wrote 1437 training and 360 test examples" in first.stderr, first.stderr
    epochs = re.findall(r"INFO:tensorflow:epoch (\d) \(step (\d+)\): train loss ([\d.]+), test accuracy ([\d.]+)",
                        first.stderr)
    assert [(int(e), int(s)) for e, s, _, _ in epochs] == [(1, 45), (2, 90), (3, 135), (4, 180)], first.stderr
    losses = [float(loss) for _, _, loss, _ in epochs]
    assert losses[-1] < losses[0] and float(epochs[-1][3]) > 0.9, first.stderr
    assert "final test accuracy" in first.stdout

    records = list(tf.python_io.tf_record_iterator(
        str(tmp_path / "data" / "test.tfrecord.gz"),
        options=tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)))
    example = tf.train.Example.FromString(records[0])
    assert len(records) == 360 and len(example.features.feature["image"].float_list.value) == 64

    [events] = glob.glob(str(tmp_path / "run" / "events.out.tfevents.*"))
    tags = [(e.step, v.tag) for e in map(tf.Event.FromString, tf.python_io.tf_record_iterator(events))
            for v in e.summary.value]
    assert tags[:2] == [(45, "train/loss"), (45, "test/accuracy")] and len(tags) == 8

    again = _run(tmp_path, "--epochs=1", "--batch_size=64")
    assert "reading the records in" in again.stderr and "epoch 1 (step 23)" in again.stderr, again.stderr


def test_a_mistyped_flag_is_named():
    out = subprocess.run([sys.executable, EXAMPLE, "--epochs=many"], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "epochs" in out.stderr and "many" in out.stderr, out.stderr
