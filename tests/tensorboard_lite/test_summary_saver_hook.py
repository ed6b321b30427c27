"""SummarySaverHook: summaries saved every N steps at the global step, by MonitoredTrainingSession itself
when the graph has summaries, with a session START marker."""

import os

import tensorweave as tf
from tensorweave_board import read_events


def _events(logdir):
    files = sorted(os.path.join(logdir, f) for f in os.listdir(logdir) if "tfevents" in f)
    return [e for f in files for e in read_events(f)]


def _model():
    step = tf.train.get_or_create_global_step()
    counter = tf.Variable(0.0, name="counter")
    train_op = tf.group(tf.assign_add(counter, 1.0), tf.assign_add(step, 1))
    tf.summary.scalar("count", counter)
    return train_op


def test_monitored_training_session_saves_summaries_every_n_steps(tmp_path):
    train_op = _model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=3,
                                           save_checkpoint_secs=None, log_step_count_steps=None) as sess:
        for _ in range(10):
            sess.run(train_op)
    tf.summary.FileWriterCache.clear()
    events = _events(str(tmp_path))
    starts = [e.step for e in events if e.WhichOneof("what") == "session_log"]
    saved = [e.step for e in events for v in e.summary.value if v.tag == "count"]
    assert starts == [1] and saved == [1, 4, 7, 10]
    assert any(e.WhichOneof("what") == "graph_def" for e in events)  # FileWriterCache writes the graph


def test_hook_with_its_own_writer_and_op(tmp_path):
    train_op = _model()
    summary_op = tf.summary.merge_all()
    writer = tf.summary.FileWriter(str(tmp_path))
    hook = tf.train.SummarySaverHook(save_steps=2, summary_writer=writer, summary_op=summary_op)
    with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
        for _ in range(5):
            sess.run(train_op)
    writer.close()
    values = [(e.step, v.simple_value) for e in _events(str(tmp_path)) for v in e.summary.value]
    assert [s for s, _ in values] == [1, 3, 5]
    assert all(abs(value - step) <= 1 for step, value in values)  # the counter runs with the global step
