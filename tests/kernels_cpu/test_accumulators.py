"""Gradient accumulators: means against numpy, stale gradients dropped, blocking takes released by applies,
sparse rows summed per index, shape errors, and closing the session releasing a waiting take."""

import time

import numpy as np
import pytest

import tensorweave as tf
from thread_helpers import start

BLOCKED = 0.2  # seconds after which a thread that has not finished counts as blocked


def _dense(shape=(2, 3), **kwargs):
    acc = tf.ConditionalAccumulator(tf.float32, shape=shape, **kwargs)
    g = tf.placeholder(tf.float32, name="g")
    step = tf.placeholder(tf.int64, [], name="local_step")
    return acc, g, step, acc.apply_grad(g, local_step=step)


def _sparse(shape=(6, 2)):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=shape)
    ids = tf.placeholder(tf.int32, [None], name="ids")
    rows = tf.placeholder(tf.float32, [None, 2], name="rows")
    step = tf.placeholder(tf.int64, [], name="local_step")
    return acc, ids, rows, step, acc.apply_grad(ids, rows, local_step=step)


def test_take_returns_the_mean_resets_and_steps_the_global_step(sess):
    rng = np.random.default_rng(0)
    acc, g, step, apply = _dense()
    take, count = acc.take_grad(3), acc.num_accumulated()
    for round_ in range(2):
        grads = rng.standard_normal((3, 2, 3)).astype(np.float32)
        for x in grads:
            sess.run(apply, {g: x, step: round_})
        assert sess.run(count) == 3
        np.testing.assert_allclose(sess.run(take), grads.astype(np.float64).mean(0), rtol=1e-6)
        assert sess.run(count) == 0  # the take reset it, and moved the global step to round_ + 1


def test_sum_reduction_and_more_gradients_than_required(sess):
    acc, g, step, apply = _dense(shape=[2], reduction_type="SUM")
    for x in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        sess.run(apply, {g: x, step: 0})
    np.testing.assert_array_equal(sess.run(acc.take_grad(2)), [9.0, 12.0])  # all three held gradients


def test_stale_gradients_are_dropped_silently(sess):
    acc, g, step, apply = _dense(shape=[2])
    take, count = acc.take_grad(1), acc.num_accumulated()
    sess.run(acc.set_global_step(tf.constant(5)))
    sess.run(apply, {g: [100.0, 100.0], step: 4})  # older than the global step 5: dropped
    assert sess.run(count) == 0
    sess.run(apply, {g: [1.0, 2.0], step: 5})
    np.testing.assert_array_equal(sess.run(take), [1.0, 2.0])
    sess.run(apply, {g: [7.0, 7.0], step: 5})  # the take moved the global step to 6: now stale
    assert sess.run(count) == 0
    sess.run(apply, {g: [3.0, 1.0], step: 6})
    np.testing.assert_array_equal(sess.run(take), [3.0, 1.0])


def test_a_blocked_take_is_released_by_another_threads_apply(sess):
    acc, g, step, apply = _dense(shape=[2])
    waiter = start(sess.run, acc.take_grad(2))
    sess.run(apply, {g: [2.0, 4.0], step: 0})
    time.sleep(BLOCKED)
    assert waiter.is_alive(), "take_grad(2) returned after one gradient"
    start(sess.run, apply, {g: [4.0, 0.0], step: 0}).finish()
    np.testing.assert_array_equal(waiter.finish(), [3.0, 2.0])


def test_sparse_rows_are_summed_per_index_and_averaged_over_the_count(sess):
    rng = np.random.default_rng(1)
    acc, ids, rows, step, apply = _sparse()
    indices, values, shape = acc.take_grad(2)
    pushes = [(np.array([4, 1, 4]), rng.standard_normal((3, 2)).astype(np.float32)),
              (np.array([1, 0]), rng.standard_normal((2, 2)).astype(np.float32))]
    for r, v in pushes:
        sess.run(apply, {ids: r, rows: v, step: 0})
    got_indices, got_values, got_shape = sess.run([indices, values, shape])
    dense = np.zeros((6, 2))
    for r, v in pushes:
        np.add.at(dense, r, v)
    np.testing.assert_array_equal(got_indices, [0, 1, 4])  # each index once, sorted
    np.testing.assert_allclose(got_values, dense[[0, 1, 4]] / 2, rtol=1e-6)
    np.testing.assert_array_equal(got_shape, [6, 2])


def test_sparse_indexed_slices_in_and_out_and_stale_drop(sess):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[None, 2])
    grad = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([3]), tf.constant([5, 2]))
    sess.run(acc.set_global_step(1))
    sess.run(acc.apply_indexed_slices_grad(grad, local_step=0))  # stale
    assert sess.run(acc.num_accumulated()) == 0
    sess.run(acc.apply_indexed_slices_grad(grad, local_step=1))
    out = acc.take_indexed_slices_grad(1)
    assert isinstance(out, tf.IndexedSlices) and out.values.shape.as_list() == [None, 2]
    got = sess.run(out)
    np.testing.assert_array_equal(got.indices, [3])
    np.testing.assert_array_equal(got.values, [[1.0, 2.0]])
    np.testing.assert_array_equal(got.dense_shape, [5, 2])


def test_shape_errors_name_both_shapes_and_the_accumulator(sess):
    acc, g, step, apply = _dense(shape=[2, 3], name="grads_w")
    with pytest.raises(ValueError, match=r"grads_w.*shape \(3, 3\).*incompatible.*\(2, 3\)"):
        acc.apply_grad(np.zeros((3, 3), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"grads_w.*shape \[2, 3\].*one of shape \[3\]"):
        sess.run(apply, {g: np.zeros(3), step: 0})
    loose, lg, lstep, lapply = _dense(shape=None, name="loose")
    sess.run(lapply, {lg: np.zeros(2), lstep: 0})  # the first gradient fixes the shape
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"loose.*shape \[2\].*one of shape \[4\]"):
        sess.run(lapply, {lg: np.zeros(4), lstep: 0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_required must be >= 1"):
        sess.run(acc.take_grad(0))
    sparse, ids, rows, sstep, sapply = _sparse(shape=(6, 2))
    with pytest.raises(ValueError, match=r"rows of shape \(3,\).*incompatible"):
        sparse.apply_grad([0], np.zeros((1, 3), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices must lie in \[0, 6\), got 2..9"):
        sess.run(sapply, {ids: [2, 9], rows: np.zeros((2, 2)), sstep: 0})


def test_shared_name_shares_one_accumulator_and_checks_it_matches(sess):
    a = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="shared_acc")
    b = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="shared_acc")
    sess.run(a.apply_grad([1.0, 1.0]))
    assert sess.run(b.num_accumulated()) == 1
    c = tf.ConditionalAccumulator(tf.float32, shape=[3], shared_name="shared_acc")
    with pytest.raises(tf.errors.InvalidArgumentError, match="shared accumulator 'shared_acc'.*shared_names"):
        sess.run(c.num_accumulated())


def test_closing_the_session_releases_a_blocked_take():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    sparse = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2], shared_name="shared_sparse")
    s = tf.Session()
    waiters = [start(s.run, acc.take_grad(1)), start(s.run, sparse.take_grad(1))]
    time.sleep(BLOCKED)
    s.close()
    for waiter in waiters:
        with pytest.raises(tf.errors.CancelledError):
            waiter.finish()
