"""tf.summary ops run by the CPU kernels: tags as TF1 names them, the Summary protos they return, and
their errors."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import tensorweave as tf
from tensorweave_board import protos
from tensorweave_board.histogram import BUCKET_LIMITS


def _values(serialized):
    return {v.tag: v for v in protos.Summary.FromString(serialized).value}


def test_scalar_summary_returns_serialized_summary_bytes(sess):
    x = tf.placeholder(tf.float32, [], name="x")
    s = tf.summary.scalar("loss", x)
    assert s.dtype == tf.string and s.shape.as_list() == [] and s.op.type == "ScalarSummary"
    out = sess.run(s, {x: 2.5})
    assert isinstance(out, bytes)
    assert _values(out)["loss"].simple_value == 2.5
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s]


def test_tags_follow_name_scopes_families_and_uniquification():
    x = tf.constant(1.0)
    with tf.name_scope("train"):
        a = tf.summary.scalar("loss", x)
        b = tf.summary.scalar("loss", x)
    c = tf.summary.scalar("acc", x, family="eval")
    d = tf.summary.scalar("bad name!", x, collections=[])
    with tf.Session() as sess:
        tags = [next(iter(_values(sess.run(t)))) for t in (a, b, c, d)]
    assert tags == ["train/loss", "train/loss_1", "eval/eval/acc", "bad_name_"]
    assert a.op.name == "train/loss" and d not in tf.get_collection(tf.GraphKeys.SUMMARIES)


def test_scalar_needs_a_scalar():
    with pytest.raises(ValueError, match="needs a scalar.*shape"):
        tf.summary.scalar("v", tf.constant([1.0, 2.0]))


def test_histogram_matches_numpy_with_tensorflows_buckets(sess):
    values = np.random.default_rng(0).normal(size=(50, 20)).astype(np.float32)
    out = sess.run(tf.summary.histogram("w", tf.constant(values)))
    h = _values(out)["w"].histo
    v = values.astype(np.float64).ravel()
    assert (h.min, h.max, h.num) == (v.min(), v.max(), 1000)
    assert h.sum == pytest.approx(v.sum()) and h.sum_squares == pytest.approx((v * v).sum())
    assert sum(h.bucket) == 1000 and h.bucket_limit[-1] == BUCKET_LIMITS[-1]
    limits = np.array(h.bucket_limit)
    lower = np.r_[-np.inf, limits[:-1]]
    expected = [((v >= lo) & (v < hi)).sum() for lo, hi in zip(lower, limits)]
    assert list(h.bucket) == expected
    assert all(a > 0 or b > 0 for a, b in zip(h.bucket[:-1], h.bucket[1:]))  # runs of empty buckets are merged


def test_histogram_of_nan_fails_the_step_naming_the_tag(sess):
    x = tf.placeholder(tf.float32, [None])
    h = tf.summary.histogram("weights", x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="histogram 'weights': 1 of 3 values are NaN or Inf"):
        sess.run(h, {x: [1.0, np.nan, 2.0]})


def test_image_summary_encodes_pngs_scaled_as_tf1(sess):
    batch = np.zeros((4, 3, 2, 1), np.float32)
    batch[0, :, :, 0] = [[0, 1], [2, 4], [1, 3]]  # non-negative: scaled by 255 / max
    batch[1, :, :, 0] = [[-2, 0], [1, 2], [0, 0]]  # negative: 128 + x * 127 / max|x|
    out = _values(sess.run(tf.summary.image("digits", tf.constant(batch), max_outputs=2)))
    assert sorted(out) == ["digits/image/0", "digits/image/1"]
    first = out["digits/image/0"].image
    assert (first.height, first.width, first.colorspace) == (3, 2, 1)
    pixels = np.asarray(Image.open(io.BytesIO(first.encoded_image_string)))
    assert pixels.tolist() == [[0, 63], [127, 255], [63, 191]]
    second = np.asarray(Image.open(io.BytesIO(out["digits/image/1"].image.encoded_image_string)))
    assert second.tolist() == [[1, 128], [191, 255], [128, 128]]
    rgb = np.full((1, 2, 2, 3), 7, np.uint8)
    one = _values(sess.run(tf.summary.image("rgb", tf.constant(rgb), max_outputs=1)))["rgb/image"].image
    assert np.asarray(Image.open(io.BytesIO(one.encoded_image_string))).tolist() == rgb[0].tolist()


def test_image_shape_is_checked():
    with pytest.raises(ValueError, match="1, 3 or 4 channels"):
        tf.summary.image("x", tf.zeros([1, 4, 4, 2]))


def test_text_summary_is_a_string_tensor_with_the_text_plugin(sess):
    out = _values(sess.run(tf.summary.text("notes", tf.constant(["a", "b"]))))
    value = out["notes"]
    assert value.metadata.plugin_data.plugin_name == "text"
    assert value.tensor.dtype == 7 and list(value.tensor.string_val) == [b"a", b"b"]
    assert [d.size for d in value.tensor.tensor_shape.dim] == [2]
    with pytest.raises(ValueError, match="needs a string tensor"):
        tf.summary.text("n", tf.constant(1.0))


def test_merge_all_and_duplicate_tags(sess):
    assert tf.summary.merge_all() is None
    x = tf.constant(3.0)
    tf.summary.scalar("a", x)
    tf.summary.histogram("b", x)
    merged = tf.summary.merge_all()
    assert merged.op.type == "MergeSummary" and merged.op.name == "Merge/MergeSummary"
    values = _values(sess.run(merged))
    assert values["a"].simple_value == 3.0 and values["b"].histo.num == 1
    dup = tf.summary.merge([merged, merged])
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicate tag 'a'"):
        sess.run(dup)


def test_without_the_package_tf_summary_says_what_to_install():
    code = ("import tensorweave as tf\n"
            "try:\n    tf.summary.scalar\nexcept ImportError as e:\n    print(e)\n")
    env = dict(os.environ, TENSORWEAVE_DISABLE_PLUGINS="board")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "tf.summary.scalar needs tensorweave[board]" in out.stdout and "pip install tensorweave[board]" in out.stdout
