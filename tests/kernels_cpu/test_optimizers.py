"""Optimizers against float64 numpy implementations of TF1's update formulas, dense and sparse, over
several steps; their slots, global step and errors; learning-rate schedules; clipping."""

import math

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(3)
SHAPE = (5, 3)
STEPS = 4


def f32(x):
    """TF1 turns a Python hyperparameter into a float32 tensor, then casts it to the variable's dtype."""
    return float(np.float32(x))


# ---- numpy references: one step on a dict of float64 arrays -----------------------------------------------
def ref_gd(s, g, lr):
    s["var"] -= f32(lr) * g


def ref_momentum(s, g, lr, momentum, use_nesterov=False):
    s["momentum"] = f32(momentum) * s["momentum"] + g
    step = g + f32(momentum) * s["momentum"] if use_nesterov else s["momentum"]
    s["var"] -= f32(lr) * step


def ref_adagrad(s, g, lr):
    s["accumulator"] += g * g
    s["var"] -= f32(lr) * g / np.sqrt(s["accumulator"])


def ref_adam(s, g, lr, beta1, beta2, epsilon):
    alpha = f32(lr) * np.sqrt(1 - float(s["beta2_power"])) / (1 - float(s["beta1_power"]))
    s["m"] += (g - s["m"]) * (1 - f32(beta1))
    s["v"] += (g * g - s["v"]) * (1 - f32(beta2))
    s["var"] -= alpha * s["m"] / (np.sqrt(s["v"]) + f32(epsilon))
    s["beta1_power"] = np.float32(s["beta1_power"] * np.float32(beta1))  # float32 non-slot variables
    s["beta2_power"] = np.float32(s["beta2_power"] * np.float32(beta2))


def ref_rmsprop(s, g, lr, decay, momentum, epsilon, centered=False):
    s["rms"] += (g * g - s["rms"]) * (1 - f32(decay))
    denominator = s["rms"] + f32(epsilon)
    if centered:
        s["mg"] += (g - s["mg"]) * (1 - f32(decay))
        denominator = denominator - s["mg"] ** 2
    s["momentum"] = f32(momentum) * s["momentum"] + f32(lr) * g / np.sqrt(denominator)
    s["var"] -= s["momentum"]


# name -> (make optimizer, reference step with its hyperparameters, initial slot values)
CASES = {
    "gd": (lambda: tf.train.GradientDescentOptimizer(0.1), lambda s, g: ref_gd(s, g, 0.1), {}),
    "momentum": (lambda: tf.train.MomentumOptimizer(0.1, 0.9), lambda s, g: ref_momentum(s, g, 0.1, 0.9),
                 {"momentum": 0.0}),
    "nesterov": (lambda: tf.train.MomentumOptimizer(0.05, 0.8, use_nesterov=True),
                 lambda s, g: ref_momentum(s, g, 0.05, 0.8, True), {"momentum": 0.0}),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.3, initial_accumulator_value=0.2),
                lambda s, g: ref_adagrad(s, g, 0.3), {"accumulator": 0.2}),
    "adam": (lambda: tf.train.AdamOptimizer(0.01, 0.9, 0.999, 1e-8),
             lambda s, g: ref_adam(s, g, 0.01, 0.9, 0.999, 1e-8), {"m": 0.0, "v": 0.0}),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.5, epsilon=1e-6),
                lambda s, g: ref_rmsprop(s, g, 0.01, 0.9, 0.5, 1e-6), {"rms": 1.0, "momentum": 0.0}),
    "centered_rmsprop": (lambda: tf.train.RMSPropOptimizer(0.02, decay=0.8, momentum=0.3, epsilon=1e-6, centered=True),
                         lambda s, g: ref_rmsprop(s, g, 0.02, 0.8, 0.3, 1e-6, True),
                         {"rms": 1.0, "mg": 0.0, "momentum": 0.0}),
}


def _initial_state(initial_var, slots):
    state = {"var": initial_var.copy()}
    state.update({name: np.full(SHAPE, value) for name, value in slots.items()})
    state["beta1_power"], state["beta2_power"] = np.float32(0.9), np.float32(0.999)
    return state


def _fetch_slots(opt, var, names):
    return {name: opt.get_slot(var, name) for name in names}


@pytest.mark.parametrize("case", sorted(CASES))
def test_dense_updates_match_the_numpy_formula(case, sess):
    make, reference, slots = CASES[case]
    initial = RNG.standard_normal(SHAPE)
    var = tf.Variable(initial, name="w")
    grad = tf.placeholder(tf.float64, SHAPE)
    opt = make()
    train = opt.apply_gradients([(grad, var)])
    slot_vars = _fetch_slots(opt, var, slots)
    assert sorted(opt.get_slot_names()) == sorted(slots)
    sess.run(tf.global_variables_initializer())
    state = _initial_state(initial, slots)
    for _ in range(STEPS):
        g = RNG.standard_normal(SHAPE)
        sess.run(train, {grad: g})
        reference(state, g)
        np.testing.assert_allclose(sess.run(var), state["var"], rtol=1e-12, atol=1e-14)
        for name, slot in slot_vars.items():
            np.testing.assert_allclose(sess.run(slot), state[name], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", sorted(CASES))
def test_sparse_updates_touch_only_their_rows_and_sum_duplicates(case, sess):
    make, reference, slots = CASES[case]
    initial = RNG.standard_normal(SHAPE)
    var = tf.Variable(initial, name="w")
    values = tf.placeholder(tf.float64, [None, SHAPE[1]])
    indices = tf.placeholder(tf.int64, [None])
    opt = make()
    train = opt.apply_gradients([(tf.IndexedSlices(values, indices, tf.constant(SHAPE)), var)])
    slot_vars = _fetch_slots(opt, var, slots)
    sess.run(tf.global_variables_initializer())
    state = _initial_state(initial, slots)
    for rows in ([0, 3, 3], [4, 1], [3, 3, 3, 0]):
        g = RNG.standard_normal((len(rows), SHAPE[1]))
        sess.run(train, {values: g, indices: rows})
        unique = np.unique(rows)
        summed = np.zeros((len(unique), SHAPE[1]))
        np.add.at(summed, np.searchsorted(unique, rows), g)
        if case == "adam":  # TF1's Adam: every row's moments decay; the gradient reaches the given rows
            dense = np.zeros(SHAPE)
            dense[unique] = summed
            ref_adam_sparse(state, dense, 0.01, 0.9, 0.999, 1e-8)
        else:
            sub = {name: value[unique].copy() if isinstance(value, np.ndarray) and value.shape == SHAPE else value
                   for name, value in state.items()}
            reference(sub, summed)
            for name, value in sub.items():
                if isinstance(value, np.ndarray) and value.shape == summed.shape:
                    state[name][unique] = value
        np.testing.assert_allclose(sess.run(var), state["var"], rtol=1e-12, atol=1e-14)
        for name, slot in slot_vars.items():
            np.testing.assert_allclose(sess.run(slot), state[name], rtol=1e-12, atol=1e-14)
    if case != "adam":
        np.testing.assert_array_equal(sess.run(var)[2], initial[2])  # a row never looked up never moves


def ref_adam_sparse(s, dense_grad, lr, beta1, beta2, epsilon):
    alpha = f32(lr) * np.sqrt(1 - float(s["beta2_power"])) / (1 - float(s["beta1_power"]))
    s["m"] = s["m"] * f32(beta1) + dense_grad * (1 - f32(beta1))
    s["v"] = s["v"] * f32(beta2) + dense_grad * dense_grad * (1 - f32(beta2))
    s["var"] -= alpha * s["m"] / (np.sqrt(s["v"]) + f32(epsilon))
    s["beta1_power"] = np.float32(s["beta1_power"] * np.float32(beta1))
    s["beta2_power"] = np.float32(s["beta2_power"] * np.float32(beta2))


@pytest.mark.parametrize("case", sorted(CASES))
def test_minimize_in_float32_follows_the_loss_gradient(case, sess):
    make, reference, slots = CASES[case]
    initial = RNG.standard_normal(SHAPE).astype(np.float32)
    scale = RNG.uniform(0.5, 2.0, SHAPE)
    var = tf.Variable(initial, name="w")
    loss = tf.reduce_sum(tf.square(var) * scale.astype(np.float32))
    train = make().minimize(loss)
    sess.run(tf.global_variables_initializer())
    state = _initial_state(initial.astype(np.float64), slots)
    for _ in range(3):
        g = 2.0 * state["var"] * scale
        sess.run(train)
        reference(state, g)
    np.testing.assert_allclose(sess.run(var), state["var"], rtol=2e-4, atol=1e-5)


def test_slot_and_non_slot_variables_are_named_like_tf1():
    w = tf.Variable(np.zeros(2), name="w")
    b = tf.Variable(np.zeros(2), name="b")
    loss = tf.reduce_sum(w * b)
    adam = tf.train.AdamOptimizer()
    train = adam.minimize(loss)
    assert [v.name for v in adam.variables()] == ["b/Adam:0", "b/Adam_1:0", "beta1_power:0", "beta2_power:0",
                                                  "w/Adam:0", "w/Adam_1:0"]
    assert adam.get_slot(w, "m").name == "w/Adam:0" and adam.get_slot(w, "nope") is None
    assert train.name == "Adam" and train in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    assert not any(v.trainable for v in adam.variables()) and tf.trainable_variables() == [w, b]
    rms = tf.train.RMSPropOptimizer(0.1, centered=True)
    rms.minimize(loss, var_list=[w])
    assert [rms.get_slot(w, n).name for n in ("rms", "mg", "momentum")] == \
        ["w/RMSProp:0", "w/RMSProp_1:0", "w/RMSProp_2:0"]


def test_global_step_increments_after_the_update_that_reads_it(sess):
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(0.0)
    learning_rate = tf.cast(step, tf.float32) + 1.0  # step k updates with k + 1
    train = tf.train.GradientDescentOptimizer(learning_rate).minimize(-w, global_step=step)
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train)
    assert sess.run(step) == 3 and tf.train.global_step(sess, step) == 3
    assert sess.run(w) == 1.0 + 2.0 + 3.0


def test_compute_gradients_gives_none_for_unconnected_variables(sess):
    used = tf.Variable(np.ones(2), name="used")
    unused = tf.Variable(np.ones(2), name="unused")
    loss = tf.reduce_sum(used * 3.0)
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    pairs = opt.compute_gradients(loss)
    assert pairs[1] == (None, unused)
    gated = opt.compute_gradients(loss, gate_gradients=opt.GATE_GRAPH)
    train = opt.apply_gradients(gated)
    assert opt.get_slot(unused, "momentum") is None
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(used), [0.7, 0.7])
    np.testing.assert_array_equal(sess.run(unused), [1.0, 1.0])


def test_optimizer_errors_name_the_problem():
    w = tf.Variable(np.ones(2), name="w")
    constant_loss = tf.constant(1.0, tf.float64) + 0.0
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(constant_loss, var_list=[w])
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(ValueError, match="Invalid type int32"):
        opt.minimize(tf.constant(3) + 1, var_list=[w])
    with pytest.raises(ValueError, match="gate_gradients must be one of"):
        opt.compute_gradients(tf.reduce_sum(w), gate_gradients=7)
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to optimize"):
            opt.minimize(tf.constant(1.0) * 2.0)


def test_learning_rate_as_a_fed_tensor_and_as_a_callable(sess):
    w = tf.Variable(np.array([1.0]))
    rate = tf.placeholder(tf.float32, [])
    train = tf.train.GradientDescentOptimizer(rate).minimize(tf.reduce_sum(w))
    calls = []
    later = tf.train.GradientDescentOptimizer(lambda: calls.append(1) or 0.25).minimize(tf.reduce_sum(w))
    sess.run(w.initializer)
    sess.run(train, {rate: 0.5})
    sess.run(later)
    np.testing.assert_allclose(sess.run(w), [0.25])
    assert calls == [1]


def test_locked_updates_from_threads_lose_nothing(sess):
    import threading
    w = tf.Variable(np.zeros(100))
    train = tf.train.GradientDescentOptimizer(1.0, use_locking=True).apply_gradients(
        [(tf.constant(-np.ones(100)), w)])
    sess.run(w.initializer)
    step = sess.make_callable(train)
    threads = [threading.Thread(target=lambda: [step() for _ in range(200)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(sess.run(w), np.full(100, 800.0))


# ---- global step helpers ------------------------------------------------------------------------------------
def test_global_step_helpers():
    assert tf.train.get_global_step() is None
    step = tf.train.create_global_step()
    assert step.name == "global_step:0" and step.dtype is tf.int64 and not step.trainable
    assert tf.train.get_global_step() is step and tf.train.get_or_create_global_step() is step
    assert step in tf.get_collection(tf.GraphKeys.GLOBAL_STEP)
    with pytest.raises(ValueError, match='"global_step" already exists'):
        tf.train.create_global_step()
    with tf.Graph().as_default():
        named = tf.Variable(0, name="global_step", trainable=False)
        assert tf.train.get_global_step() is named
    with tf.Graph().as_default():
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.Variable(0.5))
        with pytest.raises(TypeError, match="does not have integer type"):
            tf.train.get_global_step()


# ---- learning-rate schedules ------------------------------------------------------------------------------
SCHEDULES = {
    "exponential": (lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5), lambda k: 0.1 * 0.5 ** (k / 10)),
    "exponential_staircase": (lambda s: tf.train.exponential_decay(0.1, s, 10, 0.5, staircase=True),
                              lambda k: 0.1 * 0.5 ** (k // 10)),
    "natural_exp": (lambda s: tf.train.natural_exp_decay(0.1, s, 5, 0.3), lambda k: 0.1 * math.exp(-0.3 * k / 5)),
    "inverse_time": (lambda s: tf.train.inverse_time_decay(0.1, s, 5, 0.5, staircase=True),
                     lambda k: 0.1 / (1 + 0.5 * (k // 5))),
    "polynomial": (lambda s: tf.train.polynomial_decay(0.1, s, 20, 0.01, power=2.0),
                   lambda k: (0.1 - 0.01) * (1 - min(k, 20) / 20) ** 2 + 0.01),
    "polynomial_cycle": (lambda s: tf.train.polynomial_decay(0.1, s, 20, 0.01, cycle=True),
                         lambda k: (0.1 - 0.01) * (1 - k / (20 * max(1, math.ceil(k / 20)))) + 0.01),
    "cosine": (lambda s: tf.train.cosine_decay(0.1, s, 30, alpha=0.1),
               lambda k: 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(k, 30) / 30)) + 0.1)),
    "piecewise": (lambda s: tf.train.piecewise_constant(s, [10, 20], [1.0, 0.5, 0.1]),
                  lambda k: 1.0 if k <= 10 else 0.5 if k <= 20 else 0.1),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_learning_rate_schedules_follow_tf1s_formulas(name, sess):
    build, formula = SCHEDULES[name]
    step = tf.placeholder(tf.int64, [])
    rate = build(step)
    for k in (0, 1, 9, 10, 11, 19, 20, 21, 35, 50):
        np.testing.assert_allclose(sess.run(rate, {step: k}), formula(k), rtol=1e-6)


def test_schedule_errors():
    with pytest.raises(ValueError, match="global_step is required for exponential_decay"):
        tf.train.exponential_decay(0.1, None, 10, 0.5)
    with pytest.raises(ValueError, match="length of boundaries should be 1 less"):
        tf.train.piecewise_constant(tf.constant(1), [1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="must have the same dtype as x"):
        tf.train.piecewise_constant(tf.constant(1.0), [1, 2], [0.1, 0.2, 0.3])


# ---- clipping -----------------------------------------------------------------------------------------------
def test_clip_by_global_norm_with_none_and_indexed_slices(sess):
    a = RNG.standard_normal((3, 2))
    b = RNG.standard_normal(4)
    slices = tf.IndexedSlices(tf.constant(a[:2]), tf.constant([0, 2]), tf.constant([3, 2]))
    clipped, norm = tf.clip_by_global_norm([tf.constant(a), None, tf.constant(b), slices], 1.5)
    want_norm = np.sqrt((a ** 2).sum() + (b ** 2).sum() + (a[:2] ** 2).sum())
    assert clipped[1] is None and isinstance(clipped[3], tf.IndexedSlices)
    got_a, got_b, got_slices, got_norm = sess.run([clipped[0], clipped[2], clipped[3], norm])
    scale = 1.5 / want_norm
    np.testing.assert_allclose(got_norm, want_norm)
    np.testing.assert_allclose(got_a, a * scale)
    np.testing.assert_allclose(got_b, b * scale)
    np.testing.assert_allclose(got_slices.values, a[:2] * scale)
    unchanged, _ = tf.clip_by_global_norm([tf.constant(a)], 100.0)
    np.testing.assert_allclose(sess.run(unchanged[0]), a)
    nan, _ = tf.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    assert np.isnan(sess.run(nan[0])).all()
    with pytest.raises(TypeError, match="should be a sequence"):
        tf.clip_by_global_norm(tf.constant(a), 1.0)


def test_clip_by_norm_global_norm_and_average_norm(sess):
    t = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(sess.run(tf.clip_by_norm(t, 1.0)), t / max(np.linalg.norm(t), 1.0))
    rows = np.linalg.norm(t, axis=1, keepdims=True)
    np.testing.assert_allclose(sess.run(tf.clip_by_norm(t, 1.0, axes=[1])), t / np.maximum(rows, 1.0))
    np.testing.assert_allclose(sess.run(tf.clip_by_norm(np.zeros(3), 1.0)), np.zeros(3))
    np.testing.assert_allclose(sess.run(tf.global_norm([t, None, 2 * t])), np.sqrt(5) * np.linalg.norm(t))
    average = np.linalg.norm(t) / t.size
    np.testing.assert_allclose(sess.run(tf.clip_by_average_norm(t, 0.01)), t * 0.01 / max(average, 0.01))


def test_clipped_gradients_train(sess):
    w = tf.Variable(np.array([3.0, 4.0]))
    opt = tf.train.GradientDescentOptimizer(1.0)
    grads, variables = zip(*opt.compute_gradients(tf.reduce_sum(w * w)))
    clipped, _ = tf.clip_by_global_norm(list(grads), 1.0)
    train = opt.apply_gradients(zip(clipped, variables))
    sess.run(w.initializer)
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [3.0 - 0.6, 4.0 - 0.8])


def test_a_tf1_style_custom_optimizer_with_apply_dense_and_slots(sess):
    class SignSGD(tf.train.Optimizer):
        def __init__(self, learning_rate):
            super().__init__(False, "SignSGD")
            self._lr = learning_rate

        def _create_slots(self, var_list):
            for v in var_list:
                self._zeros_slot(v, "steps", self._name)

        def _apply_dense(self, grad, var):
            steps = self.get_slot(var, "steps").assign_add(tf.ones_like(var))
            return tf.group(var.assign_sub(self._lr * tf.sign(grad)), steps)

    w = tf.Variable(np.array([1.0, -1.0, 0.5]))
    train = SignSGD(0.25).minimize(tf.reduce_sum(w * w))
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [0.5, -0.5, 0.0])
    with pytest.raises(TypeError, match="defines neither _resource_apply_sparse nor _apply_sparse"):
        SignSGD(0.1).minimize(tf.reduce_sum(w.sparse_read([0])))


def test_gated_gradients_skip_the_gradient_of_a_fed_input():
    """GATE_OP groups each op's input gradients; one that leads to no variable (here the first layer's
    gradient with respect to the fed batch) is left out instead of being computed and thrown away."""
    x = tf.placeholder(tf.float32, [None, 4])
    w1, w2 = tf.Variable(np.ones((4, 3), np.float32)), tf.Variable(np.ones((3, 1), np.float32))
    loss = tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)  # gate_gradients=GATE_OP, as TF1's default
    seen, stack = set(), [train]
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend([t.op for t in op.inputs] + list(op.control_inputs))
    # forward: 2; backward: dL/dw2, dL/dh and dL/dw1, but not dL/dx
    assert sorted(op.type for op in seen).count("MatMul") == 5
