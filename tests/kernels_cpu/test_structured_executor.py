"""The structured executor (conds as ``if``, loops as ``while``) against the dataflow executor on the same
graphs: every fetched value bit for bit, the same errors naming the same op, and which executor runs."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.ops.control_flow_ops import switch


def _kinds(sess):
    return sorted({ex.kind for plan in sess._plans.values() for _, ex in plan.partitions})


def _both(build, feeds_of=lambda t: {}, runs=1, init=True, expect="structured"):
    """Runs ``build()``'s fetches through the default executor and the dataflow one; returns both results.
    ``build`` returns (fetches, inputs) or (fetches, inputs, train): a training op runs after each fetch, in
    a run of its own (fetched with the values it updates, the order of reads and updates would be a race,
    in TF1 as here)."""
    out = []
    for executor in (None, "dataflow"):
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(3)
            fetches, inputs, *train = build()
            initializer = tf.global_variables_initializer() if init else None
        with tf.Session(graph=graph, config=tf.ConfigProto(executor=executor)) as sess:
            if initializer is not None:
                sess.run(initializer)
            values = []
            for _ in range(runs):
                values.append(sess.run(fetches, feeds_of(inputs)))
                if train:
                    sess.run(train[0], feeds_of(inputs))
            kinds = _kinds(sess)
        out.append((values, kinds))
    (mine, kinds), (theirs, their_kinds) = out
    assert expect in kinds, kinds
    assert their_kinds == ["dataflow"] or "dataflow" in their_kinds
    _assert_identical(mine, theirs)
    return mine


def _assert_identical(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_identical(x, y)
        return
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_identical(a[k], b[k])
        return
    if a is None:
        assert b is None
        return
    x, y = np.asarray(a), np.asarray(b)
    assert x.dtype == y.dtype and x.shape == y.shape
    assert x.tobytes() == y.tobytes(), (x, y)


def test_while_loop_with_captured_tensors_and_python_scalars():
    def build():
        x0 = tf.placeholder(tf.float32, [None])
        scale = tf.constant(0.5)
        shift = x0 * 0.1  # captured by the closure: a loop invariant computed outside
        _, y = tf.while_loop(lambda i, x: i < 37, lambda i, x: (i + 1, x * scale + shift), [0, x0])
        return y, x0

    _both(build, lambda x0: {x0: np.linspace(-1, 1, 7, dtype=np.float32)})


@pytest.mark.parametrize("parallel_iterations", [1, 10, 32])
def test_nested_loops_with_data_dependent_bounds(parallel_iterations):
    def build():
        n = tf.placeholder(tf.int32, [])

        def outer(i, acc):
            _, inner = tf.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + tf.cast(j * i, tf.float32)),
                                     [0, acc], parallel_iterations=parallel_iterations)
            return i + 1, inner

        return tf.while_loop(lambda i, acc: i < n, outer, [0, tf.zeros([3])],
                             parallel_iterations=parallel_iterations), n

    _both(build, lambda n: {n: 9})


def test_conds_in_loops_and_loops_in_conds():
    def build():
        x = tf.placeholder(tf.float32, [4])
        flag = tf.placeholder(tf.bool, [])

        def body(i, v):
            v = tf.cond(tf.equal(i % 3, 0), lambda: v * 2.0, lambda: tf.cond(i > 4, lambda: v - 1.0, lambda: v + 0.5))
            return i + 1, v

        looped = tf.while_loop(lambda i, v: i < 10, body, [0, x])[1]
        in_cond = tf.cond(flag, lambda: tf.while_loop(lambda i, v: i < 5, lambda i, v: (i + 1, v * 1.5), [0, x])[1],
                          lambda: x - 3.0)
        return [looped, in_cond], (x, flag)

    values = np.arange(4, dtype=np.float32)
    _both(build, lambda t: {t[0]: values, t[1]: True})
    _both(build, lambda t: {t[0]: values, t[1]: False})


def test_a_conds_result_as_the_predicate_of_the_next_cond_and_of_a_loop():
    def build():
        x = tf.placeholder(tf.float32, [])
        positive = tf.cond(x > 0, lambda: tf.constant(True), lambda: x < -5.0)
        y = tf.cond(positive, lambda: x * 3.0, lambda: x - 1.0)
        n = tf.while_loop(lambda i, go: go, lambda i, go: (i + 1, i < 4), [0, positive])[0]
        return [positive, y, n], x

    for value in (2.0, -1.0, -7.0):
        _both(build, lambda x: {x: value})


def test_gradients_through_loops_and_conds():
    def build():
        w = tf.Variable(np.linspace(0.2, 0.9, 6).reshape(2, 3).astype(np.float32))
        x = tf.placeholder(tf.float32, [5, 2])

        def body(i, h):
            h = tf.tanh(tf.matmul(h, w)[:, :2] + tf.reduce_sum(w))
            h = tf.cond(i < 2, lambda: h * 2.0, lambda: tf.sigmoid(h))
            return i + 1, h

        _, h = tf.while_loop(lambda i, h: i < 4, body, [0, tf.matmul(x, w)[:, :2]])
        loss = tf.reduce_sum(h * h)
        grads = tf.gradients(loss, [w, x])
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        return [loss, grads], x, train

    _both(build, lambda x: {x: np.arange(10, dtype=np.float32).reshape(5, 2) / 10}, runs=3)


def test_tensor_arrays_written_read_and_differentiated():
    def build():
        x = tf.placeholder(tf.float32, [6, 3])
        source = tf.TensorArray(tf.float32, size=6).unstack(x)

        def body(t, acc, out):
            value = source.read(t) * acc
            return t + 1, acc + value, out.write(t, tf.sin(value))

        _, acc, out = tf.while_loop(lambda t, *_: t < 6, body, [0, tf.ones([3]), tf.TensorArray(tf.float32, size=6)])
        stacked = out.stack()
        return [acc, stacked, tf.gradients(tf.reduce_sum(stacked) + tf.reduce_sum(acc), x)], x

    _both(build, lambda x: {x: np.arange(18, dtype=np.float32).reshape(6, 3) / 18})


def test_dynamic_rnn_lstm_step_with_gradients_and_lengths():
    def build():
        inputs = tf.placeholder(tf.float32, [4, 7, 5])
        lengths = tf.placeholder(tf.int32, [4])
        cell = tf.nn.rnn_cell.LSTMCell(8, initializer=tf.constant_initializer(0.05))
        outputs, state = tf.nn.dynamic_rnn(cell, inputs, sequence_length=lengths, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(outputs)) + tf.reduce_sum(state.h)
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        return [loss, outputs, state], (inputs, lengths), train

    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 7, 5)).astype(np.float32)
    _both(build, lambda t: {t[0]: data, t[1]: np.array([7, 3, 5, 1], np.int32)}, runs=3)


def test_early_exit_on_a_data_dependent_condition():
    def build():
        x = tf.placeholder(tf.float32, [])
        return tf.while_loop(lambda i, v: tf.logical_and(i < 1000, v < 100.0), lambda i, v: (i + 1, v * 1.7 + 0.3),
                             [0, x]), x

    assert _both(build, lambda x: {x: 1.0})[0][0] < 1000
    assert _both(build, lambda x: {x: 500.0})[0][0] == 0


def test_stateful_ops_in_a_loop_body_run_once_per_iteration():
    def build():
        counter = tf.Variable(0.0)

        def body(i):
            with tf.control_dependencies([tf.assign_add(counter, 2.0)]):
                return i + 1

        done = tf.while_loop(lambda i: i < 6, body, [0])
        with tf.control_dependencies([done]):
            read = tf.identity(counter.read_value())
        return read, None

    _both(build, runs=2)


def _error_of(build, feeds_of, executor):
    graph = tf.Graph()
    with graph.as_default():
        fetches, inputs = build()
    with tf.Session(graph=graph, config=tf.ConfigProto(executor=executor)) as sess:
        with pytest.raises(errors.OpError) as info:
            sess.run(fetches, feeds_of(inputs))
        return type(info.value), info.value.op.name if info.value.op is not None else None, str(info.value), \
            _kinds(sess)


def test_an_error_inside_a_loop_body_names_the_op():
    def build():
        table = tf.placeholder(tf.float32, [4])

        def body(i, acc):
            return i + 1, acc + tf.gather(table, i, name="lookup")

        return tf.while_loop(lambda i, acc: i < 6, body, [0, 0.0])[1], table

    mine = _error_of(build, lambda t: {t: np.ones(4, np.float32)}, None)
    theirs = _error_of(build, lambda t: {t: np.ones(4, np.float32)}, "dataflow")
    assert mine[3] == ["structured"]
    assert mine[:2] == theirs[:2]
    assert mine[1].endswith("lookup")


def test_fetching_the_untaken_branch_and_a_non_scalar_predicate_fail_alike():
    def dead_fetch():
        p = tf.placeholder(tf.bool, [])
        x = tf.constant(3.0)
        taken = tf.cond(p, lambda: tf.identity(x, name="taken"), lambda: x)
        switch_false, _ = switch(x, p)
        return [taken, switch_false * 2.0], p

    mine = _error_of(dead_fetch, lambda p: {p: True}, None)
    theirs = _error_of(dead_fetch, lambda p: {p: True}, "dataflow")
    assert mine[0] is theirs[0] is errors.InvalidArgumentError
    assert "dead" in mine[2] and mine[3] == ["structured"]

    graph = tf.Graph()
    with graph.as_default():
        p = tf.placeholder(tf.bool, None)
        y = switch(tf.constant(1.0), p)[1] * 2.0
    for executor in (None, "dataflow"):
        with tf.Session(graph=graph, config=tf.ConfigProto(executor=executor)) as sess:
            with pytest.raises(errors.InvalidArgumentError, match="scalar bool"):
                sess.run(y, {p: [True, False]})
            assert sess.run(y, {p: True}) == 2.0


def test_loops_with_blocking_kernels_and_traced_steps_use_the_dataflow_executor():
    graph = tf.Graph()
    with graph.as_default():
        queue = tf.FIFOQueue(10, tf.float32, shapes=[[]])
        fill = queue.enqueue_many([[1.0, 2.0, 3.0]])
        total = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + queue.dequeue()), [0, 0.0])[1]
        plain = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    with tf.Session(graph=graph) as sess:
        sess.run(fill)
        assert sess.run(total) == 6.0
        assert "dataflow" in _kinds(sess)
        metadata = tf.RunMetadata()
        assert sess.run(plain, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                        run_metadata=metadata) == 3
        assert any("while" in s.node_name for d in metadata.step_stats.dev_stats for s in d.node_stats)


def test_control_flow_that_is_not_plain_nesting_keeps_the_dataflow_executor():
    from tensorweave.ops.control_flow_ops import merge

    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float32, [])
        first_live, index = merge([a * 2.0, a + 1.0])  # two live inputs: the first to arrive wins
    with tf.Session(graph=graph) as sess:
        value, which = sess.run([first_live, index], {a: 3.0})
        assert _kinds(sess) == ["dataflow"]
    assert (value, which) in ((6.0, 0), (4.0, 1))


def test_a_loop_body_that_never_runs_never_runs_its_placeholder():
    def build():
        n = tf.placeholder(tf.int32, [])
        return tf.while_loop(lambda i: i < n, lambda i: i + tf.placeholder(tf.int32, [], name="never_fed"), [0]), n

    assert _both(build, lambda n: {n: 0}, init=False) == [0]
