"""MonitoredSession and its hooks: restore on start, periodic checkpoints, stopping, NaN, logging,
queue runners, recovery from preemption, and a training process killed with SIGKILL that resumes."""

import logging
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import plugins
from tensorweave.hookspecs import hookimpl


def _counter_model():
    """A global step and a weight that each training step moves: w += step + 1."""
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(np.zeros(3), name="w")
    with tf.control_dependencies([w.assign_add(tf.cast(step, tf.float64) + np.ones(3))]):
        train_op = tf.assign_add(step, 1)
    return step, w, train_op


def test_stop_at_step_and_final_checkpoint(tmp_path):
    step, w, train_op = _counter_model()
    hooks = [tf.train.StopAtStepHook(last_step=5)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks) as sess:
        runs = 0
        while not sess.should_stop():
            sess.run(train_op)
            runs += 1
    assert runs == 5
    latest = tf.train.latest_checkpoint(str(tmp_path))
    assert latest.endswith("model.ckpt-5")
    assert tf.train.load_variable(latest, "global_step") == 5
    np.testing.assert_array_equal(tf.train.load_variable(latest, "w"), np.full(3, 1 + 2 + 3 + 4 + 5.0))


def test_a_new_session_restores_the_latest_checkpoint_and_continues(tmp_path):
    step, w, train_op = _counter_model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=[tf.train.StopAtStepHook(3)]) as s:
        while not s.should_stop():
            s.run(train_op)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=[tf.train.StopAtStepHook(2)]) as s:
        assert s.run(step) == 3  # restored, not re-initialized
        while not s.should_stop():
            s.run(train_op)
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "w"), np.full(3, 15.0))


def test_checkpoint_saver_hook_saves_every_n_steps_and_keeps_the_saver_limit(tmp_path):
    step, w, train_op = _counter_model()
    saver = tf.train.Saver(max_to_keep=3)
    hooks = [tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, saver=saver),
             tf.train.StopAtStepHook(last_step=7)]
    with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    steps = [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]
    assert steps == [4, 6, 7]  # saved at 0, 2, 4, 6 and at the end; three kept


def test_listeners_hear_each_save_and_can_stop_training(tmp_path):
    events = []

    class Listener(tf.train.CheckpointSaverListener):
        def before_save(self, session, global_step_value):
            events.append(("before", global_step_value))

        def after_save(self, session, global_step_value):
            events.append(("after", global_step_value))
            return global_step_value >= 4

    step, w, train_op = _counter_model()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[Listener()],
                                        saver=tf.train.Saver())
    with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
        assert sess.raw_session().run(step) == 4
    assert events == [("before", 0), ("after", 0), ("before", 2), ("after", 2), ("before", 4), ("after", 4)]


def test_nan_tensor_hook_fails_or_stops():
    loss = tf.placeholder(tf.float32, [])
    tf.train.get_or_create_global_step()
    with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
        with tf.train.SingularMonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
            sess.run(loss, {loss: 1.0})
            sess.run(loss, {loss: np.nan})
    with tf.train.SingularMonitoredSession(hooks=[tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]) as sess:
        sess.run(loss, {loss: np.nan})
        assert sess.should_stop()


def test_logging_tensor_hook_logs_every_n_iterations(caplog):
    x = tf.placeholder(tf.float32, [], name="x")
    doubled = tf.add(x, x, name="doubled")
    tf.train.get_or_create_global_step()
    hook = tf.train.LoggingTensorHook({"doubled": doubled}, every_n_iter=2, at_end=False)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            for i in range(5):
                sess.run(doubled, {x: float(i)})
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("doubled = ")]
    assert [m.split(" (")[0] for m in logged] == ["doubled = 0.0", "doubled = 4.0", "doubled = 8.0"]
    assert logged[0] == "doubled = 0.0"  # TF's format: the seconds since the previous line follow from the second
    assert all(re.fullmatch(r"doubled = \d\.0 \(\d+\.\d{3} sec\)", m) for m in logged[1:]), logged


def test_feed_fn_final_ops_and_step_counter_hooks(caplog):
    x = tf.placeholder(tf.float32, [])
    y = tf.add(x, 1.0)
    step, w, train_op = _counter_model()
    final = tf.train.FinalOpsHook(step)
    counter = tf.train.StepCounterHook(every_n_steps=2)
    feeds = tf.train.FeedFnHook(lambda: {x: 41.0})
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        with tf.train.SingularMonitoredSession(hooks=[final, counter, feeds]) as sess:
            assert sess.run(y) == 42.0
            for _ in range(4):
                sess.run(train_op)
    assert final.final_ops_values == 4
    assert counter.steps_per_sec and counter.steps_per_sec > 0
    assert any("global_step/sec" in r.getMessage() for r in caplog.records)


def test_hooks_cannot_feed_what_the_caller_feeds():
    x = tf.placeholder(tf.float32, [])
    tf.train.get_or_create_global_step()
    with tf.train.SingularMonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {x: 1.0})]) as sess:
        with pytest.raises(RuntimeError, match="fed both"):
            sess.run(x, {x: 2.0})


def test_hooks_run_options_merge_as_tf1s_the_longest_deadline_and_the_highest_trace_level():
    class Asks(tf.train.SessionRunHook):
        def __init__(self, **options):
            self.options, self.seen = tf.RunOptions(**options), None

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(None, options=self.options)

        def after_run(self, run_context, run_values):
            self.seen = (run_values.options.timeout_in_ms, run_values.options.trace_level)

    x = tf.constant(1.0)
    tf.train.get_or_create_global_step()
    short, long_, tracing = Asks(timeout_in_ms=100), Asks(timeout_in_ms=60000), Asks(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.train.SingularMonitoredSession(hooks=[short, long_, tracing]) as sess:
        sess.run(x, options=tf.RunOptions(timeout_in_ms=200))
    assert short.seen == (60000, tf.RunOptions.FULL_TRACE)


def test_run_step_fn_and_stop_request():
    step, w, train_op = _counter_model()

    def step_fn(step_context):
        value = step_context.run_with_hooks(train_op)
        if step_context.session.run(step) >= 3:
            step_context.request_stop()
        return value

    with tf.train.SingularMonitoredSession() as sess:
        while not sess.should_stop():
            sess.run_step_fn(step_fn)
        assert sess.raw_session().run(step) == 3


def test_monitored_session_runs_queue_runners_and_ends_cleanly_when_input_runs_out():
    source = tf.FIFOQueue(10, tf.int32, shapes=[])
    [batch] = tf.train.batch([source.dequeue()], 2, capacity=4)
    fill, close = source.enqueue_many([[1, 2, 3, 4, 5]]), source.close()
    tf.train.get_or_create_global_step()
    seen = []
    with tf.train.MonitoredSession() as sess:
        sess.run(fill)
        sess.run(close)
        while not sess.should_stop():
            seen.append(sess.run(batch).tolist())  # the OutOfRangeError at the end closes the session cleanly
    assert seen == [[1, 2], [3, 4]]


def test_monitored_session_recovers_from_an_aborted_step(tmp_path):
    step, w, train_op = _counter_model()
    aborted = []

    class AbortOnce(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            if not aborted and run_context.session.run(step) == 3:
                aborted.append(True)
                raise tf.errors.AbortedError(None, None, "simulated preemption of a parameter server")

    creator = tf.train.ChiefSessionCreator(checkpoint_dir=str(tmp_path))
    hooks = [tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2), AbortOnce()]
    with tf.train.MonitoredSession(creator, hooks=hooks) as sess:
        for _ in range(5):
            sess.run(train_op)
        assert sess.run(step) == 5  # steps 1-3, the abort, step 2 restored, the aborted run retried, two more
        np.testing.assert_array_equal(sess.run(w), np.full(3, 1 + 2 + 3 + 4 + 5.0))


@pytest.fixture
def fake_board(monkeypatch):
    """A plugin standing in for tensorweave_board: it registers tf.train.SummarySaverHook, which notes each hook made."""
    made = []

    class SummarySaverHook(tf.train.SessionRunHook):
        def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                     summary_op=None):
            made.append((save_steps, output_dir))

    class Board:
        @staticmethod
        @hookimpl
        def tensorweave_register_api(registrar):
            registrar.add_module("train.SummarySaverHook", SummarySaverHook)

    monkeypatch.setenv("TENSORWEAVE_DISABLE_PLUGINS", "board")
    plugins.reload(extra_plugins=[(Board, "fake_board")])
    yield SummarySaverHook, made
    monkeypatch.delenv("TENSORWEAVE_DISABLE_PLUGINS")
    plugins.reload()


def test_summaries_use_the_summary_saver_hook_a_plugin_registered(fake_board, tmp_path):
    hook_class, made = fake_board
    assert tf.train.SummarySaverHook is hook_class
    step, w, train_op = _counter_model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "none"), save_summaries_steps=7):
        pass
    assert made == []  # no summary ops in the graph: no hook
    tf.add_to_collection(tf.GraphKeys.SUMMARIES, tf.constant(b"", name="a_summary"))
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "some"), save_summaries_steps=7):
        pass
    assert made == [(7, str(tmp_path / "some"))]


_TRAINING_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    import tensorweave as tf

    checkpoint_dir, last_step, die_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(0)
    data_x = rng.standard_normal((64, 4, 3)).astype(np.float32)
    data_y = rng.standard_normal((64, 4, 1)).astype(np.float32)

    x = tf.placeholder(tf.float32, [4, 3])
    y = tf.placeholder(tf.float32, [4, 1])
    w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
    b = tf.Variable(np.zeros((1,), np.float32), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=global_step)

    hooks = [tf.train.StopAtStepHook(last_step=last_step), tf.train.NanTensorHook(loss)]
    def train_step(step_context):
        step = step_context.session.run(global_step)  # the data of a step is chosen by the global step alone
        if step == die_at:
            print("ready to die", flush=True)
            os.kill(os.getpid(), 9)
        step_context.run_with_hooks(train_op, {x: data_x[step % 64], y: data_y[step % 64]})

    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, save_checkpoint_steps=5,
                                           save_checkpoint_secs=None, hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run_step_fn(train_step)
        print("finished", flush=True)
""")


def test_a_training_process_killed_with_sigkill_resumes_to_the_same_weights(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(_TRAINING_SCRIPT)

    def run(checkpoint_dir, die_at):
        return subprocess.run([sys.executable, str(script), str(checkpoint_dir), "40", str(die_at)],
                              capture_output=True, text=True, timeout=300)

    reference = run(tmp_path / "uninterrupted", -1)
    assert reference.returncode == 0, reference.stderr
    killed = run(tmp_path / "interrupted", 23)
    assert killed.returncode == -signal.SIGKILL and "ready to die" in killed.stdout
    assert tf.train.latest_checkpoint(str(tmp_path / "interrupted")).endswith("model.ckpt-20")
    resumed = run(tmp_path / "interrupted", -1)
    assert resumed.returncode == 0 and "finished" in resumed.stdout, resumed.stderr
    for name in ("w", "b", "global_step"):
        expected = tf.train.load_variable(str(tmp_path / "uninterrupted"), name)
        np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path / "interrupted"), name), expected)
    assert tf.train.load_variable(str(tmp_path / "interrupted"), "global_step") == 40
    assert os.path.exists(tmp_path / "interrupted" / "checkpoint")
