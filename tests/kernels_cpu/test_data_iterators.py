"""tf.data iterators in sessions: state across runs, every iterator kind, OutOfRange with the training loops that
stop on it, errors naming the failing op, stateful ops in functions, and background threads that stop when
their pipeline does (a closed session, a re-initialized iterator) instead of leaking."""

import collections
import threading
import time

import numpy as np
import pytest
from thread_helpers import start

import tensorweave as tf
from tensorweave_cpu.data.pipeline import THREAD_PREFIX


def _pipeline_threads():
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX) and t.is_alive()]


def _drain(sess, element, limit=1000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("the iterator did not end")


def test_iterator_state_survives_runs_and_restarts_on_initialization():
    it = tf.data.Dataset.range(5).make_initializable_iterator()
    x = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert [sess.run(x) for _ in range(2)] == [0, 1]
        assert sess.run(x) == 2  # a later run goes on where the last stopped
        sess.run(it.initializer)
        assert _drain(sess, x) == [0, 1, 2, 3, 4]
        with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
            sess.run(x)


def test_each_session_has_its_own_iterator_state():
    x = tf.data.Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as a, tf.Session() as b:
        assert [a.run(x), a.run(x), b.run(x)] == [0, 1, 0]


def test_fetching_two_components_takes_one_element():
    ds = tf.data.Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10))
    a, b = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run([a, b]) == [0, 0]
        assert sess.run(b) == 10 and sess.run(a) == 2  # separate runs take separate elements


def test_namedtuple_and_dict_elements_keep_their_structure():
    point = collections.namedtuple("Point", "x y")
    ds = tf.data.Dataset.from_tensor_slices(point(np.arange(3), np.arange(3) * 2.0))
    ds = ds.map(lambda p: {"sum": p.x + tf.cast(p.y, tf.int64), "p": p})
    element = ds.make_one_shot_iterator().get_next()
    assert isinstance(element["p"], point)
    with tf.Session() as sess:
        got = sess.run(element)
    assert got["sum"] == 0 and isinstance(got["p"], point)


def test_monitored_training_session_stops_at_the_end_of_the_data():
    x = tf.data.Dataset.range(7).batch(2).make_one_shot_iterator().get_next()
    step = tf.train.get_or_create_global_step()
    train = tf.assign_add(step, 1)
    seen = []
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            seen.append(sess.run([x, train])[0].tolist())
    assert seen == [[0, 1], [2, 3], [4, 5], [6]]


def test_a_map_function_error_names_its_op_and_skips_only_that_element():
    def fn(x):
        return tf.check_numerics(1.0 / tf.cast(x - 1, tf.float32), "bad element")

    x = tf.data.Dataset.range(3).map(fn).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(x) == -1.0
        with pytest.raises(tf.errors.InvalidArgumentError) as caught:
            sess.run(x)
        assert sess.run(x) == 1.0
    message = str(caught.value)
    assert "map_fn/CheckNumerics" in message and "MapDataset" in message and "IteratorGetNext" in message


def test_errors_in_parallel_map_and_prefetch_arrive_in_order():
    fn = lambda x: tf.check_numerics(1.0 / tf.cast(x - 3, tf.float32), "bad")  # noqa: E731
    x = tf.data.Dataset.range(6).map(fn, num_parallel_calls=3).prefetch(2).make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(7):
            try:
                out.append(round(float(sess.run(x)), 3))
            except tf.errors.InvalidArgumentError:
                out.append("error")
            except tf.errors.OutOfRangeError:
                out.append("end")
    assert out == [-0.333, -0.5, -1.0, "error", 1.0, 0.5, "end"]


def test_random_ops_in_a_map_function_draw_per_element():
    tf.set_random_seed(1)
    x = tf.data.Dataset.range(50).map(lambda i: tf.random_uniform([], 0, 1000, tf.int64)).make_one_shot_iterator()
    with tf.Session() as sess:
        values = _drain(sess, x.get_next())
    assert len(set(values)) > 40


def test_a_variable_read_in_a_map_function_is_read_per_element():
    v = tf.Variable(10, dtype=tf.int64)
    it = tf.data.Dataset.range(3).map(lambda x: x + v).make_initializable_iterator()
    x, bump = it.get_next(), tf.assign_add(v, 100)
    with tf.Session() as sess:
        sess.run([v.initializer, it.initializer])
        assert sess.run(x) == 10
        sess.run(bump)
        assert sess.run(x) == 111  # resource variables: the function reads the current value


def test_flat_map_may_return_a_dataset_built_outside_the_function():
    other = tf.data.Dataset.from_tensor_slices([7, 8])
    x = tf.data.Dataset.range(2).flat_map(lambda _: other).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert _drain(sess, x) == [7, 8, 7, 8]


def test_shared_iterators_are_shared_between_sessions_on_one_target():
    it = tf.data.Dataset.range(10).make_initializable_iterator(shared_name="shared_it")
    x = it.get_next()
    a, b = tf.Session("local://data_shared"), tf.Session("local://data_shared")
    try:
        a.run(it.initializer)
        assert [a.run(x), b.run(x), a.run(x)] == [0, 1, 2]
    finally:
        a.close()
        b.close()
        tf.Session.reset("local://data_shared")


def test_file_cache_is_reused_by_a_later_session(tmp_path):
    path = str(tmp_path / "cache")
    counter = tf.Variable(0, dtype=tf.int64)
    ds = tf.data.Dataset.range(3).map(lambda x: x + tf.assign_add(counter, 1) * 0).cache(path)
    it = ds.make_initializable_iterator()
    x = it.get_next()
    for _ in range(2):
        with tf.Session() as sess:
            sess.run([counter.initializer, it.initializer])
            assert _drain(sess, x) == [0, 1, 2]
            counts = sess.run(counter)
    assert counts == 0  # the second session read the file; the map function did not run


# ---- threads ----------------------------------------------------------------------------------------------------
def _threaded_pipeline():
    ds = tf.data.Dataset.range(40).map(lambda x: x * 2, num_parallel_calls=3)
    ds = ds.interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2, num_parallel_calls=2)
    return ds.prefetch(4)


def test_closing_the_session_stops_every_background_thread():
    assert _pipeline_threads() == []
    x = _threaded_pipeline().make_one_shot_iterator().get_next()
    sess = tf.Session()
    assert [sess.run(x) for _ in range(3)] == [0, 2, 0]
    assert len(_pipeline_threads()) >= 4  # the parallel map's workers and the prefetch (read-aheads may be done)
    sess.close()
    assert _pipeline_threads() == []


def test_prefetching_slices_of_arrays_in_memory_computes_them_when_asked():
    """A batch of in-memory rows is a gather: a prefetch thread would only hand it over (and compete for the
    interpreter lock), so none starts; after a map, the prefetch thread does."""
    rows = tf.data.Dataset.from_tensor_slices(np.arange(40)).shuffle(8, seed=1).repeat().batch(4)
    inline, threaded = rows.prefetch(2), rows.map(lambda x: x * 2).prefetch(2)
    x, y = inline.make_one_shot_iterator().get_next(), threaded.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        first = sess.run(x)
        assert len(first) == 4 and _pipeline_threads() == []
        assert sess.run(y).tolist() == (first * 2).tolist()  # the same seed: the same shuffle
        assert len(_pipeline_threads()) == 1


def test_reinitializing_stops_the_previous_pipelines_threads():
    it = _threaded_pipeline().make_initializable_iterator()
    x = it.get_next()
    with tf.Session() as sess:
        for _ in range(3):
            sess.run(it.initializer)
            sess.run(x)
            alive = _pipeline_threads()
        assert len(alive) < 10  # only the last pipeline's threads
    assert _pipeline_threads() == []


def test_threads_end_with_the_data():
    x = _threaded_pipeline().make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert len(_drain(sess, x)) == 80
        deadline = time.time() + 5
        while _pipeline_threads() and time.time() < deadline:
            time.sleep(0.01)
        assert _pipeline_threads() == []


def test_a_get_next_waiting_for_its_producer_is_cancelled_by_closing_the_session():
    release = threading.Event()

    def slow():
        yield 1
        release.wait(10)
        yield 2

    x = tf.data.Dataset.from_generator(slow, tf.int64).prefetch(1).make_one_shot_iterator().get_next()
    sess = tf.Session()
    assert sess.run(x) == 1
    waiting = start(sess.run, x)
    time.sleep(0.2)
    sess.close()
    with pytest.raises(tf.errors.CancelledError):
        waiting.finish(timeout=5)
    release.set()
    deadline = time.time() + 5
    while _pipeline_threads() and time.time() < deadline:
        time.sleep(0.01)
    assert _pipeline_threads() == []


def test_a_deadline_interrupts_a_waiting_get_next():
    release = threading.Event()

    def never():
        release.wait(10)
        yield 1

    x = tf.data.Dataset.from_generator(never, tf.int64).prefetch(1).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(x, options=tf.RunOptions(timeout_in_ms=200))
        release.set()
        assert sess.run(x) == 1  # the element arrives after all: the iterator is intact


def test_a_string_handle_must_name_an_iterator_of_the_declared_structure():
    handle = tf.placeholder(tf.string, [])
    ints = tf.data.Dataset.range(3).make_one_shot_iterator()
    vectors = tf.data.Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([2])).get_next()
    floats = tf.data.Iterator.from_string_handle(handle, tf.float32).get_next()
    with tf.Session() as sess:
        name = sess.run(ints.string_handle())
        with pytest.raises(tf.errors.InvalidArgumentError, match="shapes"):
            sess.run(vectors, {handle: name})
        with pytest.raises(tf.errors.InvalidArgumentError, match="types"):
            sess.run(floats, {handle: name})
        with pytest.raises(tf.errors.InvalidArgumentError, match="not an iterator's string handle"):
            sess.run(floats, {handle: "nonsense"})


def test_an_iterator_in_a_cleared_container_is_made_again():
    it = tf.data.Dataset.range(5).make_initializable_iterator(shared_name="reset_it")
    x = it.get_next()
    sess = tf.Session("local://data_reset")
    try:
        sess.run(it.initializer)
        assert sess.run(x) == 0
        tf.Session.reset("local://data_reset")
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(x)  # a new, uninitialized iterator: not the closed one the kernel saw before
        sess.run(it.initializer)
        assert sess.run(x) == 0
    finally:
        sess.close()
        tf.Session.reset("local://data_reset")
