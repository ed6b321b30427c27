"""RNNs as programs use them, beyond the TF1 reference numbers: the final state fed back as the next initial state,
one cell shared by a training and a sampling graph, dropout wrappers' masks, and errors that say what to fix."""

import numpy as np
import pytest

import tensorweave as tf


def _inputs(shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape).astype(np.float32)


def test_state_fed_back_in_chunks_equals_one_long_run():
    """char-rnn's loop: run a chunk, fetch the final state (tuple of LSTMStateTuples), feed it as the next
    chunk's initial state, a nested tuple key in feed_dict."""
    x = tf.placeholder(tf.float32, [2, None, 3])
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.GRUCell(3)])
    init = cell.zero_state(2, tf.float32)
    outputs, final = tf.nn.dynamic_rnn(cell, x, initial_state=init)
    data = _inputs([2, 6, 3])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        whole_out, whole_state = sess.run([outputs, final], {x: data})
        state = sess.run(init)
        chunks = []
        for start in range(0, 6, 2):
            out, state = sess.run([outputs, final], {x: data[:, start:start + 2], init: state})
            chunks.append(out)
    assert isinstance(state[0], tf.nn.rnn_cell.LSTMStateTuple)
    np.testing.assert_allclose(np.concatenate(chunks, axis=1), whole_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state[0].h, whole_state[0].h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state[1], whole_state[1], rtol=1e-5, atol=1e-6)


def test_a_tuple_key_fed_a_value_of_another_structure_is_refused():
    c = tf.placeholder(tf.float32, [1, 2])
    h = tf.placeholder(tf.float32, [1, 2])
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="tuple of 2 tensors but its value has 3 elements"):
            sess.run(c + h, {tf.nn.rnn_cell.LSTMStateTuple(c, h): (np.zeros([1, 2]),) * 3})


def test_one_cell_in_a_training_and_a_sampling_graph_shares_its_variables():
    cell = tf.nn.rnn_cell.BasicLSTMCell(3)
    x = tf.placeholder(tf.float32, [2, 5, 2])
    train_out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    step_in = tf.placeholder(tf.float32, [2, 1, 2])
    with tf.variable_scope("rnn", reuse=True):
        sample_out, _ = tf.nn.dynamic_rnn(cell, step_in, dtype=tf.float32)
    assert [v.name for v in tf.global_variables()] == ["rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0"]
    data = _inputs([2, 5, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first, sampled = sess.run([train_out, sample_out], {x: data, step_in: data[:, :1]})
    np.testing.assert_allclose(sampled[:, 0], first[:, 0], rtol=1e-6)


def test_dropout_wrapper_drops_scales_and_spares_the_lstm_memory():
    keep = 0.5
    x = tf.placeholder(tf.float32, [64, 3, 4])
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(8), output_keep_prob=keep,
                                         state_keep_prob=keep, seed=3)
    plain = tf.nn.rnn_cell.BasicLSTMCell(8)
    init = tf.nn.rnn_cell.LSTMStateTuple(tf.placeholder(tf.float32, [64, 8]), tf.placeholder(tf.float32, [64, 8]))
    with tf.variable_scope("drop"):
        step_out, step_state = cell(x[:, 0], init)
    with tf.variable_scope("drop", reuse=True):
        plain_out, plain_state = plain(x[:, 0], init)  # the same weights, no dropout
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: _inputs([64, 3, 4]), init.c: _inputs([64, 8], 1), init.h: _inputs([64, 8], 2)}
        out, state, want_out, want_state = sess.run([step_out, step_state, plain_out, plain_state], feed)
    kept = out != 0
    assert 0.35 < kept.mean() < 0.65
    np.testing.assert_allclose(out[kept], want_out[kept] / keep, rtol=1e-5)
    np.testing.assert_allclose(state.c, want_state.c, rtol=1e-6)  # the memory is never dropped
    assert 0.35 < (state.h != 0).mean() < 0.65


def test_variational_dropout_uses_one_mask_at_every_step():
    x = tf.placeholder(tf.float32, [4, 6, 3])
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(16), output_keep_prob=0.5,
                                         variational_recurrent=True, dtype=tf.float32, seed=1)
    outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    seen = tf.nn.rnn_cell.DropoutWrapper(_InputEcho(), input_keep_prob=0.5, variational_recurrent=True,
                                         input_size=3, dtype=tf.float32, seed=2)
    echoed, _ = tf.nn.dynamic_rnn(seen, x, dtype=tf.float32, scope="echo")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, inputs_seen = sess.run([outputs, echoed], {x: _inputs([4, 6, 3]) + 2.0})
    for dropped in (out == 0, inputs_seen == 0):
        assert dropped.any() and not dropped.all()
        assert (dropped == dropped[:1, :1]).all()  # the same units in every step and every sequence
    assert set(np.unique(np.round(inputs_seen / (_inputs([4, 6, 3]) + 2.0), 5))) <= {0.0, 2.0}


class _InputEcho(tf.nn.rnn_cell.RNNCell):
    """Outputs what it is given, to see the input dropout."""

    state_size = output_size = 3

    def call(self, inputs, state):
        return inputs, state


def test_keep_prob_placeholder_fed_one_turns_dropout_off():
    keep = tf.placeholder(tf.float32, [])
    x = tf.placeholder(tf.float32, [2, 3, 2])
    wrapped = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), input_keep_prob=keep,
                                            output_keep_prob=keep)
    outputs, _ = tf.nn.dynamic_rnn(wrapped, x, dtype=tf.float32)
    data = _inputs([2, 3, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run(outputs, {x: data, keep: 1.0}), sess.run(outputs, {x: data, keep: 1.0})
        dropped = sess.run(outputs, {x: data, keep: 0.3})
    np.testing.assert_array_equal(a, b)
    assert (dropped == 0).any() and not (a == 0).any()


def test_sequence_length_of_the_wrong_size_fails_when_run():
    x = tf.placeholder(tf.float32, [None, 3, 2])
    lengths = tf.placeholder(tf.int32, [None])
    outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), x, sequence_length=lengths, dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="one length per batch element"):
            sess.run(outputs, {x: _inputs([2, 3, 2]), lengths: [3, 1, 2]})


def test_dynamic_and_static_rnn_agree_with_a_python_loop_over_the_cell():
    x = tf.placeholder(tf.float32, [3, 4, 2])
    cell = tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2)
    dyn, dyn_state = tf.nn.dynamic_rnn(cell, x, sequence_length=[4, 2, 3], dtype=tf.float32)
    with tf.variable_scope("rnn", reuse=True):
        stat, stat_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=[4, 2, 3],
                                            dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([dyn, tf.stack(stat, axis=1), dyn_state.h, stat_state.h], {x: _inputs([3, 4, 2])})
    np.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], got[3], rtol=1e-5, atol=1e-6)
    assert (got[0][1, 2:] == 0).all() and (got[0][2, 3:] == 0).all()
    np.testing.assert_allclose(got[2][1], got[0][1, 1], rtol=1e-6)  # the state stops at each length


@pytest.mark.parametrize("make_cell", [
    lambda: tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2, cell_clip=5.0),
    lambda: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.BasicLSTMCell(2)]),
], ids=["lstm_peepholes_projection", "gru_over_basic_lstm"])
def test_float64_gradients_match_finite_differences(make_cell):
    """The inputs' Jacobian in full; each weight's gradient along a random direction (the variables are set
    with ``load``: a feed of a resource variable does not reach its reads inside the loop)."""
    x = tf.placeholder(tf.float64, [2, 3, 2])
    outputs, _ = tf.nn.dynamic_rnn(make_cell(), x, sequence_length=[3, 2], dtype=tf.float64)
    weights = tf.trainable_variables()
    assert all(w.dtype.base_dtype == tf.float64 for w in weights)
    rng = np.random.RandomState(5)
    value = rng.uniform(-1, 1, [2, 3, 2])
    loss = tf.reduce_sum(outputs * rng.uniform(-1, 1, [2, 3, outputs.shape[-1].value]))
    grads = tf.gradients(loss, weights)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert tf.test.compute_gradient_error(x, [2, 3, 2], outputs, outputs.shape.as_list(), x_init_value=value,
                                              session=sess) < 1e-6
        analytic = sess.run(grads, {x: value})
        for w, g in zip(weights, analytic):
            start = sess.run(w)
            direction = rng.uniform(-1, 1, start.shape)
            ends = []
            for sign in (1, -1):
                w.load(start + sign * 1e-5 * direction, sess)
                ends.append(sess.run(loss, {x: value}))
            w.load(start, sess)
            np.testing.assert_allclose((ends[0] - ends[1]) / 2e-5, np.sum(g * direction), rtol=1e-6, err_msg=w.name)


def _layer_norm_lstm_reference(x, weights, lengths, units, forget_bias, layer_norm):
    """contrib's LayerNormBasicLSTMCell under dynamic_rnn, in float64 numpy."""
    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    def norm(v, name):
        mean, var = v.mean(1, keepdims=True), v.var(1, keepdims=True)
        return (v - mean) / np.sqrt(var + 1e-12) * weights[f"{name}/gamma"] + weights[f"{name}/beta"]
    batch, steps, _ = x.shape
    c, h = np.zeros([batch, units]), np.zeros([batch, units])
    outputs = np.zeros([batch, steps, units])
    for t in range(steps):
        z = np.concatenate([x[:, t], h], 1) @ weights["kernel"]
        if not layer_norm:
            z = z + weights["bias"]
        i, j, f, o = np.split(z, 4, axis=1)
        if layer_norm:
            i, j, f, o = norm(i, "input"), norm(j, "transform"), norm(f, "forget"), norm(o, "output")
        new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
        if layer_norm:
            new_c = norm(new_c, "state")
        new_h = np.tanh(new_c) * sigmoid(o)
        alive = (t < lengths)[:, None]
        c, h = np.where(alive, new_c, c), np.where(alive, new_h, h)
        outputs[:, t] = np.where(alive, new_h, 0)
    return outputs, c, h


@pytest.mark.parametrize("layer_norm", [True, False])
def test_layer_norm_basic_lstm_cell_against_numpy(layer_norm):
    x = tf.placeholder(tf.float64, [3, 4, 2])
    cell = tf.contrib.rnn.LayerNormBasicLSTMCell(3, forget_bias=0.5, layer_norm=layer_norm, norm_gain=1.5,
                                                 norm_shift=0.1)
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[4, 2, 3], dtype=tf.float64)
    names = [v.name[len("rnn/layer_norm_basic_lstm_cell/"):-2] for v in cell.trainable_variables]
    if layer_norm:
        assert names == ["kernel"] + [f"{g}/{p}" for g in ("input", "transform", "forget", "output", "state")
                                      for p in ("gamma", "beta")]
    else:
        assert names == ["kernel", "bias"]
    rng = np.random.RandomState(9)
    value = rng.uniform(-1, 1, [3, 4, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for v in cell.trainable_variables:
            if not v.name.endswith(("gamma:0", "beta:0")):
                v.load(rng.uniform(-0.7, 0.7, v.shape.as_list()), sess)
        weights = dict(zip(names, sess.run(cell.trainable_variables)))
        got_out, got_state = sess.run([outputs, state], {x: value})
        # a small step: normalizing over 3 features curves sharply, and the default 1e-3 step errs by ~7e-4
        error = tf.test.compute_gradient_error(x, [3, 4, 2], outputs, [3, 4, 3], x_init_value=value, delta=1e-6,
                                               session=sess)
    if layer_norm:
        np.testing.assert_allclose(weights["input/gamma"], 1.5)
        np.testing.assert_allclose(weights["state/beta"], 0.1)
    want_out, want_c, want_h = _layer_norm_lstm_reference(value, weights, np.array([4, 2, 3]), 3, 0.5, layer_norm)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got_state.c, want_c, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got_state.h, want_h, rtol=1e-9, atol=1e-12)
    assert error < 1e-6


def test_one_cell_inside_map_fn_and_inside_a_cond_branch():
    """A hierarchical encoder: dynamic_rnn inside tf.map_fn (a loop in a loop, the variables made inside both), and
    the same cell again inside a tf.cond branch; gradients reach the weights and both inputs."""
    docs = tf.placeholder(tf.float32, [3, 2, 4, 2])
    cell = tf.nn.rnn_cell.GRUCell(3)
    encoded = tf.map_fn(lambda doc: tf.nn.dynamic_rnn(cell, doc, dtype=tf.float32)[1], docs)
    take = tf.placeholder(tf.bool, [])
    one = tf.placeholder(tf.float32, [2, 4, 2])
    branch = tf.cond(take, lambda: tf.nn.dynamic_rnn(cell, one, dtype=tf.float32)[1], lambda: tf.zeros([2, 3]))
    assert len(tf.global_variables()) == 4
    grads = tf.gradients(tf.reduce_sum(encoded) + tf.reduce_sum(branch), tf.trainable_variables() + [docs, one])
    data = _inputs([3, 2, 4, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        enc, got, got_grads = sess.run([encoded, branch, grads], {docs: data, one: data[0], take: True})
        np.testing.assert_allclose(got, enc[0], rtol=1e-6)
        np.testing.assert_allclose(got_grads[-1], got_grads[-2][0], rtol=1e-5)  # doc 0 counted once in each
        assert not sess.run(branch, {docs: data, one: data[0], take: False}).any()


def test_stacked_bidirectional_rnns_are_layers_of_bidirectional_rnns():
    """contrib's stacks against the same layers built by hand from bidirectional_dynamic_rnn (same weights), and
    the static stack against the dynamic one."""
    x = tf.placeholder(tf.float32, [2, 4, 3])
    lengths = [4, 2]
    cells = [[tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.BasicLSTMCell(3)] for _ in range(2)]
    stacked, states_fw, states_bw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
        cells[0], cells[1], x, sequence_length=lengths, dtype=tf.float32)
    names = [v.name for v in tf.global_variables()]
    assert names[0] == "stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/gates/kernel:0"
    assert names[-1] == "stack_bidirectional_rnn/cell_1/bidirectional_rnn/bw/basic_lstm_cell/bias:0"
    assert stacked.shape.as_list() == [2, 4, 6] and isinstance(states_bw[1], tf.nn.rnn_cell.LSTMStateTuple)
    layer = x
    for i in range(2):
        with tf.variable_scope(f"stack_bidirectional_rnn/cell_{i}", reuse=True):
            outputs, _ = tf.nn.bidirectional_dynamic_rnn(cells[0][i], cells[1][i], layer, sequence_length=lengths,
                                                         dtype=tf.float32)
        layer = tf.concat(outputs, 2)
    static, _, static_bw = tf.contrib.rnn.stack_bidirectional_rnn(cells[0], cells[1], tf.unstack(x, axis=1),
                                                                  sequence_length=lengths, dtype=tf.float32)
    assert len(tf.global_variables()) == len(names)  # built cells keep their variables
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([stacked, layer, tf.stack(static, axis=1), states_bw[1].h, static_bw[1].h],
                       {x: _inputs([2, 4, 3])})
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6)
    np.testing.assert_allclose(got[0], got[2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3], got[4], rtol=1e-5, atol=1e-6)
    assert (got[0][1, 2:] == 0).all()
