"""tf.Assert, tf.Print and tf.print: run-time checks and printing through Python's streams."""

import logging

import numpy as np
import pytest

import tensorweave as tf


def test_assert_passes_or_fails_with_its_data(sess):
    x = tf.placeholder(tf.float32, [None])
    check = tf.Assert(tf.reduce_all(tf.greater(x, 0.0)), ["x must be positive:", x], summarize=4)
    with tf.control_dependencies([check]):
        y = tf.identity(x)
    np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: [1.0, -2.5, 3.0, 4.0, 5.0]})
    message = str(info.value)
    assert "assertion failed: [x must be positive:] [1 -2.5 3 4...]" in message
    assert "test_logging_ops.py" in message  # the line that created the Assert


def test_assert_condition_must_be_a_scalar():
    with pytest.raises(ValueError, match="must be a scalar bool"):
        tf.Assert(tf.constant([True, False]), ["no"])


def test_print_passes_its_input_through_and_prints_first_n(sess, capsys):
    x = tf.placeholder(tf.int32, [2, 2])
    y = tf.Print(tf.identity(x), [x, "tag"], message="values: ", first_n=2)
    for _ in range(3):
        np.testing.assert_array_equal(sess.run(y, {x: [[1, 2], [3, 4]]}), [[1, 2], [3, 4]])
    assert capsys.readouterr().err == "values: [[1 2][3...]][tag]\n" * 2


def test_print_gradient_is_the_identity(sess):
    x = tf.placeholder(tf.float64, [])
    g = tf.gradients(tf.Print(tf.multiply(x, x), [x]), x)[0]
    assert sess.run(g, {x: 3.0}) == 6.0


def test_tf_print_streams_and_formatting(sess, capsys, tmp_path, caplog):
    x = tf.constant(np.arange(10))
    target = tmp_path / "log.txt"
    ops = [tf.print("x =", x, {"k": tf.constant(1.5)}, output_stream="stdout", summarize=2),
           tf.print("to stderr", tf.constant("text"), sep="|", end="!\n"),
           tf.print("to file", output_stream=f"file://{target}")]
    sess.run(ops)
    captured = capsys.readouterr()
    assert captured.out == "x = [0 1 ... 8 9] {'k': 1.5}\n"
    assert captured.err == "to stderr|text!\n"
    assert target.read_text() == "to file\n"
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        sess.run(tf.print("logged", output_stream=logging.info))
    assert "logged" in caplog.text
    with pytest.raises(ValueError, match="output_stream must be"):
        tf.print("x", output_stream=42)
