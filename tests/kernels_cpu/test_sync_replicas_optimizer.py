"""tf.train.SyncReplicasOptimizer in one process: replicas as threads of one session, gradients aggregated
by the chief's queue runner, stale gradients dropped, a token per replica releasing each step."""

import threading

import numpy as np
import pytest

import tensorweave as tf


def _model(m, n):
    w = tf.Variable([1.0, 2.0], name="w")
    step = tf.train.get_or_create_global_step()
    g = tf.placeholder(tf.float32, [2], name="g")
    loss = tf.reduce_sum(w * g)  # d loss / d w = g
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), replicas_to_aggregate=m,
                                         total_num_replicas=n)
    train = opt.minimize(loss, global_step=step)
    return w, step, g, opt, train


def _in_thread(fn):
    out = {}

    def body():
        try:
            out["value"] = fn()
        except Exception as e:  # noqa: BLE001 - re-raised by the caller
            out["error"] = e

    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t, out


def _finish(t, out, what):
    t.join(20)
    assert not t.is_alive(), f"{what} hung"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def test_two_replicas_average_their_gradients_each_step():
    with tf.Graph().as_default():
        w, step, g, opt, train = _model(2, 2)
        sync_op = opt.get_chief_queue_runner().enqueue_ops[0]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(opt.local_step_init_op)
            for round_ in range(3):
                # each replica pushes its gradient and waits for a token; the chief's op releases both
                replicas = [_in_thread(lambda gr=gr: sess.run(train, {g: np.asarray(gr, np.float32)}))
                            for gr in ([1.0, 0.0], [3.0, 2.0])]
                sess.run(sync_op)
                for t, out in replicas:
                    _finish(t, out, "a replica")
                assert sess.run(step) == round_ + 1
            np.testing.assert_allclose(sess.run(w), [1.0 - 3 * 2.0, 2.0 - 3 * 1.0])  # mean gradient [2, 1]


def test_stale_gradients_are_dropped():
    with tf.Graph().as_default():
        w, step, g, opt, train = _model(1, 2)
        sync_op = opt.get_chief_queue_runner().enqueue_ops[0]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(step.assign(5))
            sess.run(opt.get_init_tokens_op())  # one token carrying step 5
            # local step 0 < global step 5: this push is stale; it takes the initial token (local step 5)
            sess.run(train, {g: np.array([100.0, 100.0], np.float32)})
            chief = _in_thread(lambda: sess.run(sync_op))
            sess.run(train, {g: np.array([1.0, 1.0], np.float32)})  # local step 5: fresh, applied
            _finish(*chief, "the chief")
            np.testing.assert_allclose(sess.run(w), [0.0, 1.0])
            assert sess.run(step) == 6


def test_hook_starts_the_chief_and_training_runs():
    with tf.Graph().as_default():
        w, step, g, opt, train = _model(1, 1)
        hook = opt.make_session_run_hook(is_chief=True)
        with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
            for _ in range(4):
                sess.run(train, {g: np.array([0.5, 0.5], np.float32)})
            assert sess.run(step) >= 3


def test_arguments_are_checked():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 3)
        with pytest.raises(ValueError, match="global_step"):
            opt.minimize(v * 2.0)
        with pytest.raises(ValueError, match="must come after apply_gradients"):
            opt.get_init_tokens_op()
        with pytest.raises(TypeError, match="wraps a tf.train.Optimizer"):
            tf.train.SyncReplicasOptimizer("sgd", 2)
        with pytest.raises(ValueError, match=">= 1"):
            tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 0)


def test_chief_init_op_makes_gradients_older_than_a_restored_global_step_stale():
    """One accumulator per variable under TF1's shared name; the chief's init gives it the global step."""
    with tf.Graph().as_default():
        w, step, g, opt, train = _model(2, 2)
        graph = tf.get_default_graph()
        assert not [op.name for op in graph.get_operations() if op.type == "Enter"], "aggregation in a while loop"
        (push,) = [op for op in graph.get_operations() if op.type == "AccumulatorApplyGradient"]
        (local_step,) = tf.local_variables()
        probe = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="w/grad_accum")
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(step.assign(7))  # as if restored from a checkpoint at step 7
            sess.run(opt.chief_init_op)
            assert sess.run(local_step) == 7
            sess.run(local_step.assign(3))
            sess.run(push, {g: np.array([1.0, 1.0], np.float32)})  # computed at step 3 < 7: dropped
            assert sess.run(probe.num_accumulated()) == 0
            sess.run(local_step.assign(7))
            sess.run(push, {g: np.array([1.0, 1.0], np.float32)})
            assert sess.run(probe.num_accumulated()) == 1


def test_a_chief_without_gradients_and_a_replica_without_a_token_stop_at_their_deadline():
    """A lost replica does not hang the others silently: RunOptions(timeout_in_ms=) names the op each waited in."""
    with tf.Graph().as_default():
        w, step, g, opt, train = _model(2, 2)
        sync_op = opt.get_chief_queue_runner().enqueue_ops[0]
        deadline = tf.RunOptions(timeout_in_ms=200)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            chief = _in_thread(lambda: sess.run(sync_op, options=deadline))  # no replica pushes
            with pytest.raises(tf.errors.DeadlineExceededError, match=r"(?s)200 ms.*\(AccumulatorTakeGradient\)"):
                _finish(*chief, "the chief")
            replica = _in_thread(lambda: sess.run(train, {g: np.ones(2, np.float32)}, options=deadline))
            with pytest.raises(tf.errors.DeadlineExceededError, match=r"(?s)200 ms.*sync_token_q.*\(QueueDequeueV2\)"):
                _finish(*replica, "a replica")  # pushed, then waited for a token no chief gives
