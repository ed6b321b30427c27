"""tf.image's codecs against TF1 (tests/fixtures/tf1/make_image_codecs.py): decoded pixels equal to TF's for every
JPEG setting, PNG bit depth and channel count, GIF, BMP and decode_image dtype; JPEG encoding byte for byte; the
errors TF raises; and files read, decoded and resized the way input pipelines do."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

CASES = load("image_codecs")
# libjpeg-turbo fills a truncated JPEG's missing blocks its own way under simplejpeg; TF's recovery differs.
DIFFERENT_PIXELS = {"decode_jpeg jpeg truncated {'try_recover_truncated': True}"}
SOURCES = {name[len("source "):]: case["data"].encode("latin-1") for name, case in CASES.items()
           if case["kind"] == "source"}


def _cases(kind):
    return [pytest.param(dict(case, name=name), id=name) for name, case in CASES.items() if case["kind"] == kind]


def _kwargs(args):
    return {k: (tf.as_dtype(v) if k == "dtype" else v) for k, v in args.items()}


@pytest.mark.parametrize("case", _cases("decode"))
def test_decoders_match_tf(case):
    contents = tf.placeholder(tf.string, [])
    out = getattr(tf.image, case["fn"])(contents, **_kwargs(case["args"]))
    assert (out.shape.as_list() if out.shape.ndims is not None else None) == case["static_shape"]
    with tf.Session() as s:
        if "error" in case:
            with pytest.raises(getattr(tf.errors, case["error"])):
                s.run(out, {contents: SOURCES[case["source"]]})
            return
        got = s.run(out, {contents: SOURCES[case["source"]]})
    want = array(case["out"], case["out_dtype"])
    assert got.dtype == want.dtype and got.shape == want.shape
    if case["name"] not in DIFFERENT_PIXELS:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", _cases("encode_jpeg"))
def test_encode_jpeg_writes_tf_bytes(case):
    pixels = array(case["pixels"], np.uint8)
    with tf.Session() as s:
        data = s.run(tf.image.encode_jpeg(tf.constant(pixels), **case["args"]))
    assert data == case["data"].encode("latin-1")


@pytest.mark.parametrize("dtype, channels", [(np.uint8, 1), (np.uint8, 2), (np.uint8, 3), (np.uint8, 4),
                                             (np.uint16, 1), (np.uint16, 3), (np.uint16, 4)])
def test_encode_png_round_trips(dtype, channels):
    pixels = np.random.RandomState(channels).randint(0, np.iinfo(dtype).max, (5, 7, channels)).astype(dtype)
    image = tf.placeholder(tf.as_dtype(dtype), [None, None, channels])
    encoded = tf.image.encode_png(image, compression=9)
    decoded = tf.image.decode_png(encoded, dtype=tf.as_dtype(dtype))
    assert encoded.shape.as_list() == [] and decoded.shape.as_list() == [None, None, None]
    with tf.Session() as s:
        data, back = s.run([encoded, decoded], {image: pixels})
    assert data.startswith(b"\x89PNG")
    np.testing.assert_array_equal(back, pixels)


def test_an_input_pipeline_reads_decodes_and_resizes_files(tmp_path):
    files = []
    for name in ("jpeg 420", "png rgb", "bmp 24", "gif"):
        path = tmp_path / name.replace(" ", "_")
        path.write_bytes(SOURCES[name])
        files.append(str(path))
    filename = tf.placeholder(tf.string, [])
    image = tf.image.decode_image(tf.read_file(filename), channels=3, expand_animations=False)
    image = tf.image.convert_image_dtype(image, tf.float32)
    resized = tf.image.resize_images(image, [8, 8])
    assert resized.shape.as_list() == [8, 8, 3]
    with tf.Session() as s:
        for path in files:
            out = s.run(resized, {filename: path})
            assert out.shape == (8, 8, 3) and out.dtype == np.float32 and 0 <= out.min() and out.max() <= 1


def test_decoders_raise_tf_errors_that_say_what_was_wrong():
    contents = tf.placeholder(tf.string, [])
    with tf.Session() as s:
        for fn, blob, message in [(tf.image.decode_jpeg, b"hello", "Invalid JPEG data"),
                                  (tf.image.decode_png, b"", "Invalid PNG data"),
                                  (tf.image.decode_bmp, b"BM", "Invalid BMP data"),
                                  (tf.image.decode_image, b"hello", "unknown image file format")]:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                s.run(fn(contents), {contents: blob})
    with pytest.raises(ValueError, match="scalar string"):
        tf.image.decode_jpeg(tf.constant([b"a", b"b"]))
    with pytest.raises(ValueError, match="rank"):
        tf.image.encode_png(tf.zeros([2, 2], tf.uint8))
