"""Gradients through tf.cond (taken branch only) and tf.while_loop (stacks and a reversed backward loop),
against finite differences and against the same computation unrolled in Python."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_gradients


# ---- cond ------------------------------------------------------------------------------------------------
def test_cond_gradient_follows_the_taken_branch(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float64, [3])
    only_true = tf.placeholder(tf.float64, [3])
    y = tf.cond(p, lambda: tf.multiply(tf.sin(x), only_true), lambda: tf.multiply(x, x))
    gx, gt = tf.gradients(tf.reduce_sum(y), [x, only_true])
    xv, tv = np.array([0.1, 0.5, -1.0]), np.array([2.0, 3.0, 4.0])
    got = sess.run([gx, gt], {p: True, x: xv, only_true: tv})
    np.testing.assert_allclose(got[0], np.cos(xv) * tv)
    np.testing.assert_allclose(got[1], np.sin(xv))
    got = sess.run([gx, gt], {p: False, x: xv, only_true: tv})
    np.testing.assert_allclose(got[0], 2 * xv)
    np.testing.assert_allclose(got[1], np.zeros(3))  # used only by the untaken branch


@pytest.mark.parametrize("taken", [True, False])
def test_cond_gradients_against_finite_differences(taken):
    def fn(x, w):
        return tf.cond(tf.constant(taken), lambda: tf.tanh(tf.matmul(x, w)),
                       lambda: tf.cond(tf.constant(not taken), lambda: tf.multiply(x, 3.0), lambda: x))

    check_gradients(fn, [(2, 2), (2, 2)])


# ---- while_loop against the unrolled computation ------------------------------------------------------------
def _rnn(h0, xs, w, u, steps, unrolled):
    """h = tanh(h @ w + xs[t] @ u) for t < steps, as a while_loop or unrolled in Python."""
    if unrolled:
        h = h0
        for t in range(steps):
            h = tf.tanh(tf.add(tf.matmul(h, w), tf.matmul(xs[t], u)))
        return h
    inputs = tf.TensorArray(tf.float64, size=steps).unstack(xs)

    def body(t, h):
        return tf.add(t, 1), tf.tanh(tf.add(tf.matmul(h, w), tf.matmul(inputs.read(t), u)))

    return tf.while_loop(lambda t, h: tf.less(t, steps), body, [0, h0])[1]


def test_loop_gradients_match_the_unrolled_model(sess):
    rng = np.random.default_rng(0)
    steps = 6
    values = {"h0": rng.normal(size=(2, 3)), "xs": rng.normal(size=(steps, 2, 4)), "w": rng.normal(size=(3, 3)) * 0.5,
              "u": rng.normal(size=(4, 3)) * 0.5}
    ph = {k: tf.placeholder(tf.float64, v.shape) for k, v in values.items()}
    feed = {ph[k]: v for k, v in values.items()}
    results = []
    for unrolled in (False, True):
        h = _rnn(ph["h0"], ph["xs"], ph["w"], ph["u"], steps, unrolled)
        loss = tf.reduce_sum(tf.multiply(h, h))
        results.append(sess.run([h] + tf.gradients(loss, [ph["h0"], ph["xs"], ph["w"], ph["u"]]), feed))
    for looped, unrolled in zip(*results):
        np.testing.assert_allclose(looped, unrolled, rtol=1e-10, atol=1e-12)


# ---- while_loop against finite differences ------------------------------------------------------------------
def _loop(body, init, count=3, **kwargs):
    return tf.while_loop(lambda i, *v: tf.less(i, count), lambda i, *v: (tf.add(i, 1),) + tuple(body(*v)),
                         [0] + list(init), **kwargs)[1:]


CASES = {
    "captured tensor": (lambda x, w: _loop(lambda y: [tf.tanh(tf.multiply(y, w))], [x])[0], [(3,), (3,)]),
    "nested loops": (lambda x: _loop(lambda y: [_loop(lambda z: [tf.multiply(tf.sin(z), x)], [y])[0]], [x], 2)[0],
                     [(2,)]),
    "cond inside loop": (lambda x: tf.while_loop(
        lambda i, y: tf.less(i, 4),
        lambda i, y: (tf.add(i, 1), tf.cond(tf.less(i, 2), lambda: tf.multiply(y, y), lambda: tf.sin(y))),
        [0, x])[1], [(2,)]),
    "dead branch of a cond in a loop": (lambda x: tf.while_loop(
        lambda i, y: tf.less(i, 3),
        lambda i, y: (tf.add(i, 1), tf.cond(tf.less(i, 1), lambda: tf.multiply(y, y), lambda: tf.sin(x))),
        [0, x], shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])[1], [(2,)]),
    "unknown shapes": (lambda x: _loop(lambda y: [tf.multiply(tf.sin(y), y)], [x],
                                       shape_invariants=[tf.TensorShape([]), tf.TensorShape(None)])[0], [(2,)]),
    "unused exit feeding a used one": (lambda x: _loop(lambda a, b: [tf.multiply(a, b), tf.sin(b)], [x, x])[0],
                                       [(2,)]),
    "variable that forgets its value": (lambda x: _loop(lambda a, b: [tf.multiply(b, x), tf.sin(b)], [x, x])[0],
                                        [(2,)]),
    "maximum_iterations": (lambda x: tf.while_loop(lambda y: tf.constant(True), lambda y: tf.sin(tf.multiply(y, y)),
                                                   [x], maximum_iterations=3), [(2,)]),
    "loop in a cond in a loop": (lambda x, w: tf.while_loop(
        lambda i, y: tf.less(i, 3),
        lambda i, y: (tf.add(i, 1), tf.cond(tf.less(i, 1), lambda: _loop(
            lambda z: [tf.sin(tf.add(tf.multiply(z, w), y))], [y], 2)[0], lambda: tf.multiply(y, w))),
        [0, x])[1], [(2,), (2,)]),
    "three nested loops": (lambda x: _loop(lambda a: [_loop(lambda b: [_loop(
        lambda c: [tf.multiply(tf.sin(c), x)], [b], 2)[0]], [a], 2)[0]], [x], 2)[0], [(2,)]),
    "iteration count decided by the data": (lambda x: tf.while_loop(
        lambda y: tf.less(tf.reduce_sum(tf.multiply(y, y)), 50.0), lambda y: tf.multiply(y, 1.5), [x]), [(2,)]),
    "functions of the iteration count": (lambda x: _loop(
        lambda y: [tf.add(y, tf.sin(tf.multiply(x, tf.cast(tf.size(y), tf.float64))))], [x])[0], [(3,)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_loop_gradients_against_finite_differences(case):
    fn, shapes = CASES[case]
    check_gradients(fn, shapes)


def test_loop_inside_a_cond_branch(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float64, [2])
    y = tf.cond(p, lambda: _loop(lambda v: [tf.multiply(v, x)], [x])[0], lambda: tf.sin(x))
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    xv = np.array([1.5, -2.0])
    np.testing.assert_allclose(sess.run(g, {p: True, x: xv}), 4 * xv ** 3)
    np.testing.assert_allclose(sess.run(g, {p: False, x: xv}), np.cos(xv))


@pytest.mark.parametrize("threads", [1, 4])
def test_parallel_iterations_keep_stacks_in_order(threads):
    n = tf.placeholder(tf.int32, [])
    w = tf.placeholder(tf.float64, [])
    body = lambda i, a: (tf.add(i, 1), tf.add(a, tf.sin(tf.multiply(w, tf.cast(i, tf.float64)))))  # noqa: E731
    _, total = tf.while_loop(lambda i, a: tf.less(i, n), body, [0, tf.constant(0.0, tf.float64)],
                             parallel_iterations=16)
    grad = tf.gradients(total, w)[0]
    i = np.arange(300)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=threads)) as sess:
        got = sess.run([total, grad], {n: 300, w: 0.01})
    np.testing.assert_allclose(got, [np.sin(0.01 * i).sum(), (i * np.cos(0.01 * i)).sum()])


def test_zero_iterations_pass_the_gradient_through(sess):
    n = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float64, [])
    y = _loop(lambda v: [tf.multiply(v, v)], [x], count=n)[0]
    g = tf.gradients(y, x)[0]
    assert sess.run(g, {n: 0, x: 3.0}) == 1.0
    assert sess.run(g, {n: 2, x: 3.0}) == pytest.approx(4 * 3.0 ** 3)


def test_forward_values_travel_on_stacks_unless_back_prop_is_off(sess):
    x = tf.placeholder(tf.float64, [])
    y = _loop(lambda v: [tf.sin(tf.multiply(v, x))], [x])[0]
    before = len(tf.get_default_graph().get_operations())
    tf.gradients(y, x)
    added = {op.type for op in tf.get_default_graph().get_operations()[before:]}
    assert {"StackV2", "StackPushV2", "StackPopV2"} <= added
    z = _loop(lambda v: [tf.sin(tf.multiply(v, x))], [x], back_prop=False)[0]
    before = len(tf.get_default_graph().get_operations())
    gz = tf.gradients(tf.add(z, x), x)[0]
    assert not {"StackV2", "StackPushV2"} & {op.type for op in tf.get_default_graph().get_operations()[before:]}
    assert sess.run(gz, {x: 0.3}) == 1.0  # only the path around the loop


def test_two_gradient_computations_of_one_loop(sess):
    x = tf.placeholder(tf.float64, [])
    y = _loop(lambda v: [tf.multiply(v, x)], [x])[0]  # x ** 4
    g1 = tf.gradients(y, x)[0]
    g2 = tf.gradients(tf.multiply(y, y), x)[0]  # x ** 8
    assert sess.run([g1, g2], {x: 2.0}) == [pytest.approx(32.0), pytest.approx(8 * 2.0 ** 7)]


def test_second_order_loop_gradients_are_refused():
    x = tf.placeholder(tf.float64, [])
    y = _loop(lambda v: [tf.multiply(v, x)], [x])[0]
    g = tf.gradients(y, x)[0]
    with pytest.raises(TypeError, match="second-order gradients through while loops are not supported"):
        tf.gradients(g, x)


def test_the_backward_loop_runs_on_the_forward_loop_device():
    x = tf.placeholder(tf.float64, [2])
    with tf.device("/cpu:1"):
        y = _loop(lambda v: [tf.multiply(v, tf.sin(x))], [x])[0]
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    xv = np.array([0.5, 1.0])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        got = sess.run(g, {x: xv})
    s, c = np.sin(xv), np.cos(xv)
    np.testing.assert_allclose(got, s ** 3 + xv * 3 * s ** 2 * c)


# ---- variables captured by nested loops: against the unrolled model and finite differences --------------------
def _nested_model(x, w, u, unrolled, outer=3, inner=2):
    """for i < outer: (for j < inner: h = tanh(h @ w)); h = h * sigmoid(h @ u) + x — w, u read inside."""
    def inner_step(h):
        return tf.tanh(tf.matmul(h, w))

    def outer_step(h):
        if unrolled:
            for _ in range(inner):
                h = inner_step(h)
        else:
            h = _loop(lambda v: [inner_step(v)], [h], inner)[0]
        return tf.add(tf.multiply(h, tf.sigmoid(tf.matmul(h, u))), x)

    if unrolled:
        h = x
        for _ in range(outer):
            h = outer_step(h)
        return h
    return _loop(lambda v: [outer_step(v)], [x], outer)[0]


def test_gradients_to_variables_captured_by_nested_loops(sess):
    rng = np.random.default_rng(5)
    w = tf.Variable(rng.normal(size=(3, 3)) * 0.6, name="w")
    u = tf.Variable(rng.normal(size=(3, 3)) * 0.6, name="u")
    x = tf.placeholder(tf.float64, [2, 3])
    feed = {x: rng.normal(size=(2, 3))}
    losses = [tf.reduce_sum(tf.square(_nested_model(x, w, u, unrolled))) for unrolled in (False, True)]
    grads = [tf.gradients(loss, [w, u, x]) for loss in losses]
    sess.run(tf.global_variables_initializer())
    looped, unrolled = sess.run(grads, feed)
    for a, b in zip(looped, unrolled):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    delta = 1e-6
    for var, symbolic in ((w, looped[0]), (u, looped[1])):
        base = sess.run(var)
        numeric = np.zeros_like(base)
        for index in np.ndindex(base.shape):
            values = []
            for sign in (1, -1):
                moved = base.copy()
                moved[index] += sign * delta
                var.load(moved, sess)
                values.append(sess.run(losses[0], feed))
            numeric[index] = (values[0] - values[1]) / (2 * delta)
        var.load(base, sess)
        np.testing.assert_allclose(symbolic, numeric, rtol=1e-6, atol=1e-7)


def test_an_optimizer_trains_variables_read_inside_a_loop(sess):
    rng = np.random.default_rng(6)
    w = tf.Variable(np.eye(2) * 0.5)
    x = tf.placeholder(tf.float64, [None, 2])
    target = tf.placeholder(tf.float64, [None, 2])
    out = _loop(lambda h: [tf.tanh(tf.matmul(h, w))], [x], 4)[0]
    loss = tf.reduce_mean(tf.square(out - target))
    train = tf.train.MomentumOptimizer(0.5, 0.9).minimize(loss)
    true_w = np.array([[0.9, -0.4], [0.3, 0.8]])
    data = rng.normal(size=(32, 2))
    want = data
    for _ in range(4):
        want = np.tanh(want @ true_w)
    feed = {x: data, target: want}
    sess.run(tf.global_variables_initializer())
    before = sess.run(loss, feed)
    for _ in range(200):
        sess.run(train, feed)
    assert sess.run(loss, feed) < 0.01 * before


def test_stacks_push_and_pop_in_order_and_say_when_full_or_empty():
    from tensorweave.ops import stack_ops

    def program(max_size, pushes, pops):
        handle = stack_ops.stack(tf.float32, max_size=max_size)
        done = []
        for k in range(pushes):
            with tf.control_dependencies(done):
                done = [stack_ops.stack_push(handle, tf.constant(float(k)))]
        values = []
        for _ in range(pops):
            with tf.control_dependencies(done):
                values.append(stack_ops.stack_pop(handle, tf.float32))
                done = [values[-1]]
        return values or done

    with tf.Session() as s:
        assert s.run(program(-1, 3, 3)) == [2.0, 1.0, 0.0]
        assert s.run(program(2, 2, 1)) == [1.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="is full: it holds its maximum of 2 elements"):
            s.run(program(2, 3, 0))
        with pytest.raises(tf.errors.InvalidArgumentError, match="pop from the empty stack .*never saved"):
            s.run(program(-1, 1, 2))
