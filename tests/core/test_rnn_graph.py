"""Building RNNs (no kernels needed): TF1's scopes and variable names, sizes and static shapes, the namespaces
(tf.nn.rnn_cell, tf.contrib.rnn), which weights a cell counts, and the errors a wrong call gets."""

import pytest

import tensorweave as tf


def _names():
    return [v.name for v in tf.global_variables()]


def test_contrib_rnn_names_the_core_cells():
    from tensorweave.contrib import rnn
    assert rnn is tf.contrib.rnn
    for name in ("BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper",
                 "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple", "RNNCell"):
        assert getattr(tf.contrib.rnn, name) is getattr(tf.nn.rnn_cell, name)
    assert tf.contrib.rnn.static_rnn is tf.nn.static_rnn


def test_sizes_and_zero_state_shapes():
    lstm = tf.nn.rnn_cell.LSTMCell(5, num_proj=3)
    assert lstm.state_size == (5, 3) and lstm.output_size == 3
    assert tf.nn.rnn_cell.LSTMCell(5, num_proj=3, state_is_tuple=False).state_size == 8
    multi = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2), lstm])
    assert multi.state_size == (2, (5, 3)) and multi.output_size == 3
    batch = tf.placeholder(tf.int32, [])
    gru_zero, (c, h) = multi.zero_state(batch, tf.float32)
    assert gru_zero.shape.as_list() == [None, 2] and c.shape.as_list() == [None, 5] and h.shape.as_list() == [None, 3]
    assert tf.nn.rnn_cell.BasicLSTMCell(4).zero_state(7, tf.float64).h.shape.as_list() == [7, 4]


def test_outputs_keep_static_shapes_with_unknown_batch_and_time():
    x = tf.placeholder(tf.float32, [None, None, 3])
    outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4, num_proj=2), x, dtype=tf.float32)
    assert outputs.shape.as_list() == [None, None, 2]
    assert state.c.shape.as_list() == [None, 4] and state.h.shape.as_list() == [None, 2]
    xt = tf.placeholder(tf.float32, [6, 2, 3])
    outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), xt, time_major=True, dtype=tf.float32, scope="tm")
    assert outputs.shape.as_list() == [6, 2, 4]


def test_a_cell_called_again_reuses_its_variables_and_counts_them():
    cell = tf.nn.rnn_cell.GRUCell(2)
    x = tf.placeholder(tf.float32, [1, 3])
    h, _ = cell(x, tf.zeros([1, 2]))
    cell(x, h)
    assert _names() == ["gru_cell/gates/kernel:0", "gru_cell/gates/bias:0", "gru_cell/candidate/kernel:0",
                        "gru_cell/candidate/bias:0"]
    assert cell.trainable_variables == tf.global_variables() and cell.weights == tf.global_variables()
    other = tf.nn.rnn_cell.GRUCell(2)
    other(x, h)
    assert _names()[-1] == "gru_cell_1/candidate/bias:0"  # a second cell in the same scope gets its own


def test_wrappers_keep_the_wrapped_cells_names_and_weights():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    inner = tf.nn.rnn_cell.BasicLSTMCell(4)
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.ResidualWrapper(inner), output_keep_prob=0.9)
    tf.nn.dynamic_rnn(tf.nn.rnn_cell.DeviceWrapper(cell, "/cpu:0"), x, dtype=tf.float32)
    assert _names() == ["rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0"]
    assert cell.trainable_weights == inner.trainable_weights == tf.trainable_variables()


def test_device_wrapper_places_the_cells_ops():
    x = tf.placeholder(tf.float32, [2, 3])
    cell = tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(2), "/job:worker/device:CPU:1")
    out, _ = cell(x, cell.zero_state(2, tf.float32))
    assert out.op.device.endswith("CPU:1")


def test_old_style_user_cell_in_static_rnn_reuses_after_the_first_step():
    class Cell(tf.nn.rnn_cell.RNNCell):
        state_size = output_size = 2

        def __call__(self, inputs, state, scope=None):
            with tf.variable_scope(scope or "cell"):
                w = tf.get_variable("w", [inputs.shape[1].value + 2, 2])
            out = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w))
            return out, out

    xs = [tf.placeholder(tf.float32, [1, 3]) for _ in range(3)]
    outputs, _ = tf.nn.static_rnn(Cell(), xs, dtype=tf.float32)
    assert len(outputs) == 3 and _names() == ["rnn/cell/w:0"]


def test_bidirectional_and_static_scopes():
    x = tf.placeholder(tf.float32, [2, 3, 2])
    tf.nn.bidirectional_dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2), x, dtype=tf.float32)
    xs = tf.unstack(x, axis=1)
    outputs, fw, bw = tf.nn.static_bidirectional_rnn(tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(3),
                                                     xs, dtype=tf.float32, scope="sbi")
    assert [o.shape.as_list() for o in outputs] == [[2, 5]] * 3
    assert "bidirectional_rnn/fw/gru_cell/gates/kernel:0" in _names()
    assert "bidirectional_rnn/bw/gru_cell/candidate/bias:0" in _names()
    assert "sbi/bw/basic_rnn_cell/kernel:0" in _names()


def test_stack_bidirectional_rnn_scopes():
    xs = [tf.placeholder(tf.float32, [2, 3]) for _ in range(2)]
    outputs, _, _ = tf.contrib.rnn.stack_bidirectional_rnn(
        [tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2)],
        [tf.nn.rnn_cell.BasicRNNCell(3), tf.nn.rnn_cell.BasicRNNCell(3)], xs, dtype=tf.float32)
    assert [o.shape.as_list() for o in outputs] == [[2, 5], [2, 5]]
    assert _names()[0] == "stack_bidirectional_rnn/cell_0/fw/gru_cell/gates/kernel:0"
    assert "stack_bidirectional_rnn/cell_1/fw/gru_cell/candidate/bias:0" in _names()
    assert "stack_bidirectional_rnn/cell_0/bw/basic_rnn_cell/kernel:0" in _names()
    with pytest.raises(ValueError, match="same depth"):
        tf.contrib.rnn.stack_bidirectional_dynamic_rnn([tf.nn.rnn_cell.GRUCell(2)], [tf.nn.rnn_cell.GRUCell(2)] * 2,
                                                       xs[0], dtype=tf.float32)


@pytest.mark.parametrize("build, error, match", [
    (lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), x), ValueError, "you must give a dtype"),
    (lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), x, sequence_length=[[1, 2]], dtype=tf.float32),
     ValueError, "sequence_length must be a vector"),
    (lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), x, sequence_length=[1, 2, 3], dtype=tf.float32),
     ValueError, r"Expected shape for Tensor .* is \[2\]"),
    (lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.placeholder(tf.float32, [2, 3, None]),
                                 dtype=tf.float32), ValueError, "depth of inputs"),
    (lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.placeholder(tf.float32), dtype=tf.float32),
     ValueError, "unknown rank"),
    (lambda x: tf.nn.dynamic_rnn("not a cell", x, dtype=tf.float32), TypeError, "is not an RNNCell"),
    (lambda x: tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), x, dtype=tf.float32), TypeError, "must be a sequence"),
    (lambda x: tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(2), output_keep_prob=1.5), ValueError,
     "between 0 and 1"),
    (lambda x: tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(2), variational_recurrent=True), ValueError,
     "dtype must be provided"),
    (lambda x: tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(2), input_keep_prob=0.5,
                                             variational_recurrent=True, dtype=tf.float32), ValueError,
     "input_size must be provided"),
    (lambda x: tf.nn.rnn_cell.MultiRNNCell([]), ValueError, "at least one cell"),
    (lambda x: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2)], state_is_tuple=False), ValueError,
     "state_is_tuple is not set"),
])
def test_wrong_calls_say_what_is_wrong(build, error, match):
    with pytest.raises(error, match=match):
        build(tf.placeholder(tf.float32, [2, 3, 2]))


def test_residual_wrapper_refuses_outputs_of_another_size():
    cell = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.GRUCell(3))
    x = tf.placeholder(tf.float32, [2, 4])
    with pytest.raises(ValueError):
        cell(x, tf.zeros([2, 3]))
