"""tf.while_loop: values, structures, captured tensors, nesting with cond, parallel iterations, errors."""

import collections
import time

import numpy as np
import pytest

import tensorweave as tf


def _count_and_sum(n, parallel_iterations=10):
    return tf.while_loop(lambda i, acc: tf.less(i, n), lambda i, acc: (tf.add(i, 1), tf.add(acc, i)), [0, 0],
                         parallel_iterations=parallel_iterations)


@pytest.mark.parametrize("parallel_iterations", [1, 10])
@pytest.mark.parametrize("threads", [1, 4])
def test_counting_loop(parallel_iterations, threads):
    n = tf.placeholder(tf.int32, [])
    i, total = _count_and_sum(n, parallel_iterations)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=threads)) as sess:
        assert sess.run([i, total], {n: 100}) == [100, 4950]
        assert sess.run([i, total], {n: 0}) == [0, 0]


def test_loop_over_a_long_sequence_and_plan_reuse(sess):
    n = tf.placeholder(tf.int32, [])
    _, total = _count_and_sum(n)
    for count in (1, 2, 2000):
        assert sess.run(total, {n: count}) == count * (count - 1) // 2


def test_single_variable_and_return_same_structure(sess):
    one = tf.while_loop(lambda x: tf.less(x, 10.0), lambda x: tf.multiply(x, 2.0), [tf.constant(1.0)])
    same = tf.while_loop(lambda x: tf.less(x, 10.0), lambda x: [tf.multiply(x, 2.0)], [tf.constant(1.0)],
                         return_same_structure=True)
    bare = tf.while_loop(lambda x: tf.less(x, 10.0), lambda x: tf.multiply(x, 2.0), tf.constant(1.0))
    assert isinstance(one, tf.Tensor) and isinstance(same, list) and isinstance(bare, tf.Tensor)
    assert sess.run([one, same, bare]) == [16.0, [16.0], 16.0]


def test_nested_structures_of_loop_variables(sess):
    State = collections.namedtuple("State", "step values")

    def body(s):
        return State(tf.add(s.step, 1), {"a": tf.multiply(s.values["a"], 2.0), "b": [tf.add(s.values["b"][0], 3)]})

    init = State(tf.constant(0), {"a": tf.constant([1.0, 2.0]), "b": [tf.constant(0)]})
    out = tf.while_loop(lambda s: tf.less(s.step, 4), body, [init])
    got = sess.run(out)
    assert isinstance(got, State) and got.step == 4 and got.values["b"] == [12]
    np.testing.assert_allclose(got.values["a"], [16.0, 32.0])


def test_captured_tensors_and_placeholders(sess):
    w = tf.placeholder(tf.float32, [2, 2])
    x0 = tf.placeholder(tf.float32, [1, 2])
    _, x = tf.while_loop(lambda i, x: tf.less(i, 3), lambda i, x: (tf.add(i, 1), tf.matmul(x, w)), [0, x0])
    wv = np.array([[0.5, 1.0], [2.0, -1.0]], np.float32)
    xv = np.array([[1.0, 3.0]], np.float32)
    np.testing.assert_allclose(sess.run(x, {w: wv, x0: xv}), xv @ wv @ wv @ wv, rtol=1e-6)


def test_constants_in_the_body_run_in_every_iteration(sess):
    out = tf.while_loop(lambda i, s: tf.less(i, 5), lambda i, s: (tf.add(i, tf.constant(1)), tf.add(s, 2.5)),
                        [0, tf.constant(0.0)])
    assert list(sess.run(out)) == [5, 12.5]


def test_nested_loops(sess):
    n = tf.placeholder(tf.int32, [])

    def outer(i, total):
        _, inner = tf.while_loop(lambda j, s: tf.less(j, i), lambda j, s: (tf.add(j, 1), tf.add(s, j)), [0, 0])
        return tf.add(i, 1), tf.add(total, inner)

    _, total = tf.while_loop(lambda i, t: tf.less(i, n), outer, [0, 0])
    expected = sum(sum(range(i)) for i in range(10))
    assert sess.run(total, {n: 10}) == expected


def test_cond_inside_a_loop(sess):
    def body(i, evens, odds):
        is_even = tf.equal(tf.floormod(i, 2), 0)
        evens, odds = tf.cond(is_even, lambda: (tf.add(evens, i), odds), lambda: (evens, tf.add(odds, i)))
        return tf.add(i, 1), evens, odds

    _, evens, odds = tf.while_loop(lambda i, e, o: tf.less(i, 10), body, [0, 0, 0])
    assert sess.run([evens, odds]) == [20, 25]


def test_loop_inside_a_cond_branch(sess, capsys):
    p = tf.placeholder(tf.bool, [])
    n = tf.placeholder(tf.int32, [])

    def looping():
        return tf.while_loop(lambda i: tf.less(i, n), lambda i: tf.Print(tf.add(i, 1), [i], message="ITER "), [0])

    y = tf.cond(p, looping, lambda: tf.constant(-1))
    assert sess.run(y, {p: True, n: 3}) == 3
    assert capsys.readouterr().err.count("ITER") == 3
    assert sess.run(y, {p: False, n: 3}) == -1
    assert "ITER" not in capsys.readouterr().err


def test_maximum_iterations_stops_the_loop(sess):
    limit = tf.placeholder(tf.int32, [])
    i, x = tf.while_loop(lambda i, x: tf.less(i, 100), lambda i, x: (tf.add(i, 1), tf.multiply(x, 2.0)),
                         [0, tf.constant(1.0)], maximum_iterations=limit)
    assert sess.run([i, x], {limit: 5}) == [5, 32.0]
    assert sess.run(i, {limit: 500}) == 100


def test_shape_invariants_let_a_shape_grow(sess):
    x = tf.constant([1.0])
    out = tf.while_loop(lambda v: tf.less(tf.size(v), 8), lambda v: tf.concat([v, v], 0), [x],
                        shape_invariants=[tf.TensorShape([None])])
    np.testing.assert_allclose(sess.run(out), np.ones(8))
    assert out.shape.as_list() == [None]


def test_a_shape_change_without_invariant_names_the_variable_and_both_shapes():
    x = tf.constant([1.0])
    with pytest.raises(ValueError, match=r"loop_vars\[1\] \(tensor 'Const.*'\) enters the loop with shape \(1,\), "
                                         r"but has shape \(2,\) after one iteration .*shape_invariants"):
        tf.while_loop(lambda i, v: tf.less(i, 3), lambda i, v: (tf.add(i, 1), tf.concat([v, v], 0)), [0, x])


def test_body_structure_and_dtype_errors():
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match=r"loop_vars is \[\*, \*\] and body returned \(\*,\)"):
        tf.while_loop(lambda a, b: tf.less(a, 2.0), lambda a, b: (a,), [x, x])
    with pytest.raises(TypeError, match="enters the loop with dtype float32, but the body returns dtype int32"):
        tf.while_loop(lambda a: tf.less(a, 2.0), lambda a: tf.constant(1), [x])
    with pytest.raises(TypeError, match="cond must return a scalar bool tensor"):
        tf.while_loop(lambda a: a, lambda a: a, [x])


def test_fetching_or_feeding_inside_a_loop_is_refused(sess):
    n = tf.placeholder(tf.int32, [])
    seen = []

    def body(i):
        seen.append(tf.add(i, 1))
        return seen[-1]

    out = tf.while_loop(lambda i: tf.less(i, n), body, [0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot fetch .* inside while-loop frame"):
        sess.run(seen[0], {n: 3})
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot feed .* inside while-loop frame"):
        sess.run(out, {n: 3, seen[0]: 5})


def test_control_dependencies_on_outside_ops(sess, capsys):
    announce = tf.print("before", output_stream="stdout")
    with tf.control_dependencies([announce]):
        out = tf.while_loop(lambda i: tf.less(i, 3), lambda i: tf.add(i, 1), [0])
    assert sess.run(out) == 3
    assert capsys.readouterr().out == "before\n"
    once = tf.print("outside", output_stream="stdout")

    def body(i):
        with tf.control_dependencies([once]):  # an op outside the loop: it runs once, before the iterations
            return tf.add(i, 1)

    assert sess.run(tf.while_loop(lambda i: tf.less(i, 4), body, [0])) == 4
    assert capsys.readouterr().out == "outside\n"


def test_imported_graph_def_with_a_loop_runs():
    graph = tf.Graph()
    with graph.as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        _, total = _count_and_sum(n)
        tf.identity(total, name="total")
    data = graph.as_graph_def().SerializeToString()
    with tf.Graph().as_default():
        tf.import_graph_def(tf.GraphDef.FromString(data), name="imported")
        with tf.Session() as sess:
            assert sess.run("imported/total:0", {"imported/n:0": 10}) == 45


def test_tensor_arrays_as_loop_variables(sess):
    n = 5
    ta = tf.TensorArray(tf.float32, size=n)
    _, ta = tf.while_loop(lambda i, ta: tf.less(i, n),
                          lambda i, ta: (tf.add(i, 1), ta.write(i, tf.multiply(tf.cast(i, tf.float32), 2.0))), [0, ta])
    assert isinstance(ta, tf.TensorArray)
    np.testing.assert_allclose(sess.run(ta.stack()), [0, 2, 4, 6, 8])


def test_a_loop_runs_on_its_device_and_a_split_loop_runs_across_devices():
    config = tf.ConfigProto(device_count={"CPU": 2})
    x = tf.constant(1.0)
    with tf.device("/cpu:1"):
        on_one = tf.while_loop(lambda v: tf.less(v, 10.0), lambda v: tf.multiply(v, 3.0), [x])

    def split_body(v):
        with tf.device("/cpu:0"):
            return tf.multiply(v, 3.0)

    with tf.device("/cpu:1"):
        split = tf.while_loop(lambda v: tf.less(v, 10.0), split_body, [x])
    with tf.Session(config=config) as sess:
        meta = tf.RunMetadata()
        assert sess.run(on_one, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta) == 27.0
        assert any(d.device.endswith("CPU:1") for d in meta.step_stats.dev_stats)
        assert sess.run(split) == 27.0


@pytest.mark.parametrize("parallel_iterations", [1, 2, 4])
def test_iterations_overlap_up_to_parallel_iterations(parallel_iterations):
    """Each iteration announces itself, then blocks on an empty queue: with parallel_iterations=k, k
    iterations start before the first one can finish."""
    from thread_helpers import start
    values = tf.FIFOQueue(10, tf.float32, shapes=[])
    started = tf.FIFOQueue(10, tf.int32, shapes=[])

    def body(i, total):
        with tf.control_dependencies([started.enqueue(i)]):
            return tf.add(i, 1), tf.add(total, values.dequeue())

    _, total = tf.while_loop(lambda i, t: tf.less(i, 4), body, [0, 0.0], parallel_iterations=parallel_iterations)
    with tf.Session() as sess:
        loop = start(sess.run, total)
        deadline = time.time() + 5
        while sess.run(started.size()) < parallel_iterations and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # no further iteration may start while the first is blocked
        assert sess.run(started.size()) == parallel_iterations
        sess.run(values.enqueue_many([[1.0, 2.0, 3.0, 4.0]]))
        assert loop.finish() == 10.0
        assert sorted(sess.run(started.dequeue_many(4)).tolist()) == [0, 1, 2, 3]
