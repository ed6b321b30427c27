"""Building a plan for a large graph: the collector is held off while it compiles and given back as it was, and
equal fused formulas compile once (benchmarks/ measures the speed; here only the behaviour)."""

import gc

import pytest

import tensorweave as tf


def _chain(length):
    x = tf.placeholder(tf.float32, [])
    y = x
    for _ in range(length):
        y = y + 1.0
    return x, y


def test_the_collector_is_back_as_it_was_after_a_plan_compiles_or_fails():
    x, y = _chain(300)
    with tf.Session() as sess:
        assert gc.isenabled()
        assert sess.run(y, {x: 0.5}) == 300.5
        assert gc.isenabled()
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            sess.run(y * 2.0)
        assert gc.isenabled()
        gc.disable()
        try:
            sess.run(y + 2.0, {x: 0.0})
            assert not gc.isenabled()  # a program that turned it off keeps it off
        finally:
            gc.enable()


def test_a_long_chain_cut_into_equal_fused_pieces_computes_every_step():
    x, y = _chain(1000)  # the fusion pass cuts it into nodes of equal formulas, compiled once
    with tf.Session() as sess:
        assert sess.run(y, {x: 0.0}) == 1000.0
