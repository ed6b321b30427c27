"""tf.contrib.layers, tf.contrib.framework and tf.contrib.slim.

TF 2 has no tf.contrib, so the reference numbers come from the compat.v1 layers that TF 1.15's contrib is built on
(contrib's fully_connected is tf.layers.Dense, its convolution tf.layers.Conv1D/2D, its batch_norm
tf.layers.BatchNormalization when the updates go to UPDATE_OPS): tests/fixtures/tf1/conv_layers_programs.py's
``contrib_reference_*`` programs, run by real TensorFlow, with the weights carried over under contrib's names.
The names themselves (``fully_connected/weights``, ``Conv/biases``, ``BatchNorm/moving_mean``,
``conv1/conv1_2/weights`` from slim.repeat), the model-variable collections and arg_scope's rules are TF 1.15's
contrib source behaviour; the rest is checked against numpy.
"""

import importlib.util

import numpy as np
import pytest
from tf1_fixtures import FOLDER, array, load

import tensorweave as tf

slim = tf.contrib.slim
layers = tf.contrib.layers


def _programs_module():
    spec = importlib.util.spec_from_file_location("conv_layers_programs", FOLDER / "conv_layers_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROGRAMS = _programs_module()
EXPECTED = load("conv_layers")

# case -> (contrib builder, {contrib variable name: the TF layer's name})
CONTRIB = {
    "contrib_reference_dense_relu": (lambda x: layers.fully_connected(x, 4), {
        "fully_connected/weights:0": "dense/kernel:0", "fully_connected/biases:0": "dense/bias:0"}),
    "contrib_reference_dense_rank3": (lambda x: slim.fully_connected(x, 4, activation_fn=None), {
        "fully_connected/weights:0": "dense/kernel:0", "fully_connected/biases:0": "dense/bias:0"}),
    "contrib_reference_conv2d_same_relu": (lambda x: layers.conv2d(x, 4, 3), {
        "Conv/weights:0": "conv2d/kernel:0", "Conv/biases:0": "conv2d/bias:0"}),
    "contrib_reference_conv2d_stride2": (lambda x: slim.conv2d(x, 3, [3, 2], stride=2, activation_fn=None), {
        "Conv/weights:0": "conv2d/kernel:0", "Conv/biases:0": "conv2d/bias:0"}),
    "contrib_reference_conv2d_rate2_valid": (
        lambda x: layers.convolution2d(x, 3, 3, padding="VALID", rate=2, activation_fn=None), {
            "Conv/weights:0": "conv2d/kernel:0", "Conv/biases:0": "conv2d/bias:0"}),
    "contrib_reference_conv1d": (lambda x: layers.convolution(x, 4, 3), {
        "Conv/weights:0": "conv1d/kernel:0", "Conv/biases:0": "conv1d/bias:0"}),
    "layers_separable_conv2d": (
        lambda x: slim.separable_conv2d(x, 4, 3, depth_multiplier=2, activation_fn=None), {
            "SeparableConv2d/depthwise_weights:0": "separable_conv2d/depthwise_kernel:0",
            "SeparableConv2d/pointwise_weights:0": "separable_conv2d/pointwise_kernel:0",
            "SeparableConv2d/biases:0": "separable_conv2d/bias:0"}),
    "layers_conv2d_transpose_same_stride2": (
        lambda x: layers.conv2d_transpose(x, 2, 3, stride=2, activation_fn=None), {
            "Conv2d_transpose/weights:0": "conv2d_transpose/kernel:0",
            "Conv2d_transpose/biases:0": "conv2d_transpose/bias:0"}),
    "contrib_reference_batch_norm_training": (
        lambda x: PROGRAMS._with_moving_stats(tf, slim.batch_norm(x, is_training=True)), {
            "BatchNorm/beta:0": "batch_normalization/beta:0",
            "BatchNorm/moving_mean:0": "batch_normalization/moving_mean:0",
            "BatchNorm/moving_variance:0": "batch_normalization/moving_variance:0"}),
    "contrib_reference_batch_norm_scale_inference": (
        lambda x: layers.batch_norm(x, decay=0.9, epsilon=0.01, scale=True, is_training=False), {
            "BatchNorm/beta:0": "batch_normalization/beta:0", "BatchNorm/gamma:0": "batch_normalization/gamma:0",
            "BatchNorm/moving_mean:0": "batch_normalization/moving_mean:0",
            "BatchNorm/moving_variance:0": "batch_normalization/moving_variance:0"}),
}


@pytest.mark.parametrize("name", sorted(CONTRIB))
def test_contrib_layer_matches_the_tf_layer_it_is_built_on(name):
    build, names = CONTRIB[name]
    want = EXPECTED[name]
    shape = list(np.shape(array(want["grads"][0])))
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape)
        outputs = build(x)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        variables = sorted(tf.global_variables(), key=lambda v: names[v.name])  # in the order TF's are
        assert sorted(names[v.name] for v in variables) == sorted(want["names"])
        assert sorted(v.name for v in slim.get_model_variables()) == sorted(names)
        loss = tf.add_n([tf.reduce_sum(t * t + 0.5 * t) for t in outputs])
        grads = tf.gradients(loss, [x] + [v for v in variables if v.trainable])
        with tf.Session() as sess:
            for v in variables:
                sess.run(v.assign(PROGRAMS._weight(names[v.name], v.shape.as_list())))
            got = sess.run({"outputs": outputs, "grads": grads}, {x: PROGRAMS._data(int(want["seed"]), shape)})
    for key in ("outputs", "grads"):
        for i, (g, w) in enumerate(zip(got[key], want[key])):
            np.testing.assert_allclose(g, array(w), rtol=2e-5, atol=2e-5, err_msg=f"{name}: {key}[{i}]")


def _names(variables):
    return [v.op.name for v in variables]


def test_variable_names_scopes_and_collections_are_contribs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 3])
        net = slim.repeat(x, 2, slim.conv2d, 4, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.batch_norm(net)
        net = slim.flatten(net)
        net = slim.stack(net, slim.fully_connected, [8, (5, None)], scope="fc")
        again = layers.fully_connected(tf.zeros([1, 3]), 2)
        shared = layers.fully_connected(tf.zeros([1, 3]), 2, scope="fully_connected", reuse=True)
        assert _names(slim.get_model_variables()) == [
            "conv1/conv1_1/weights", "conv1/conv1_1/biases", "conv1/conv1_2/weights", "conv1/conv1_2/biases",
            "BatchNorm/beta", "BatchNorm/moving_mean", "BatchNorm/moving_variance", "fc/fc_1/weights",
            "fc/fc_1/biases", "fc/fc_2/weights", "fc/fc_2/biases", "fully_connected/weights", "fully_connected/biases"]
        assert "BatchNorm/moving_mean" not in _names(tf.trainable_variables())
        assert net.op.name == "fc/fc_2/BiasAdd" and net.shape.as_list() == [2, 5]
        assert again.op.name == "fully_connected/Relu" and shared.op.name == "fully_connected_1/Relu"
        assert _names(slim.get_variables_to_restore(exclude=["fc", "BatchNorm"])) == [
            "conv1/conv1_1/weights", "conv1/conv1_1/biases", "conv1/conv1_2/weights", "conv1/conv1_2/biases",
            "fully_connected/weights", "fully_connected/biases"]
        assert _names(slim.get_variables_to_restore(include=["conv1/conv1_2"])) == [
            "conv1/conv1_2/weights", "conv1/conv1_2/biases"]
        assert _names(slim.get_variables_by_name("weights")) == [
            "conv1/conv1_1/weights", "conv1/conv1_2/weights", "fc/fc_1/weights", "fc/fc_2/weights",
            "fully_connected/weights"]
        assert _names(slim.get_model_variables("fc", suffix="biases")) == ["fc/fc_1/biases", "fc/fc_2/biases"]
        assert slim.get_unique_variable("BatchNorm/beta").op.name == "BatchNorm/beta"
        with pytest.raises(TypeError, match="not a list or a tuple"):
            slim.get_variables_to_restore(exclude="fc")
        with pytest.raises(ValueError, match="Couldn't find variable"):
            slim.get_unique_variable("nope")


def test_variables_collections_and_outputs_collections():
    with tf.Graph().as_default():
        y = layers.fully_connected(tf.zeros([1, 3]), 2, variables_collections={"weights": ["W"]},
                                   outputs_collections="outs")
        layers.conv2d(tf.zeros([1, 4, 4, 1]), 2, 3, variables_collections=["all"], scope="c")
        assert _names(tf.get_collection("W")) == ["fully_connected/weights"]
        assert _names(tf.get_collection("all")) == ["c/weights", "c/biases"]
        assert tf.get_collection("outs") == [y]


def test_arg_scope_defaults_overrides_nesting_and_reuse():
    @slim.add_arg_scope
    def f(a, b=1, c=2):
        return a, b, c

    with slim.arg_scope([f], b=10) as outer:
        assert f(0) == (0, 10, 2)
        assert f(0, b=3) == (0, 3, 2)
        with slim.arg_scope([f], c=20):
            assert f(0) == (0, 10, 20)
        assert f(0) == (0, 10, 2)
    assert f(0) == (0, 1, 2)
    with slim.arg_scope(outer):
        assert f(0) == (0, 10, 2)
    assert slim.has_arg_scope(f) and slim.has_arg_scope(slim.conv2d) and not slim.has_arg_scope(len)
    with pytest.raises(ValueError, match="is not decorated with @add_arg_scope"):
        with slim.arg_scope([len], b=1):
            pass
    with tf.Graph().as_default():
        with slim.arg_scope([slim.conv2d, slim.fully_connected], activation_fn=None,
                            weights_regularizer=slim.l2_regularizer(0.5)):
            net = slim.conv2d(tf.zeros([1, 4, 4, 1]), 2, [3, 3])
            net = slim.fully_connected(slim.flatten(net), 3, activation_fn=tf.nn.relu)
        assert net.op.type == "Relu"
        assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 2


def test_regularizers_and_apply_regularization():
    w_value = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    with tf.Graph().as_default():
        w = tf.constant(w_value)
        l2, l1 = layers.l2_regularizer(0.1)(w), layers.l1_regularizer(0.2)(w)
        both = layers.l1_l2_regularizer(0.2, 0.1)(w)
        assert l2.op.name == "l2_regularizer" and l1.op.name == "l1_regularizer"
        assert layers.l2_regularizer(0.0)(w) is None
        total = layers.apply_regularization(layers.l2_regularizer(0.1), [w, 2 * w])
        assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [total]
        with tf.Session() as sess:
            got = sess.run([l2, l1, both, total])
    sq = float((w_value ** 2).sum())
    np.testing.assert_allclose(got, [0.05 * sq, 0.2 * np.abs(w_value).sum(), 0.2 * np.abs(w_value).sum() + 0.05 * sq,
                                     0.05 * sq * 5], rtol=1e-6)
    with pytest.raises(ValueError, match="less than 0"):
        layers.l2_regularizer(-0.1)
    with pytest.raises(ValueError, match="integer"):
        layers.l1_regularizer(1)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="No weights to regularize"):
        layers.apply_regularization(layers.l2_regularizer(0.1))


def test_initializers_follow_contribs_formulas():
    with tf.Graph().as_default():
        xavier = tf.get_variable("x", [400, 200], initializer=layers.xavier_initializer(seed=1))
        xavier_normal = tf.get_variable("xn", [400, 200], initializer=layers.xavier_initializer(False, seed=2))
        he = tf.get_variable("he", [3, 3, 40, 60], initializer=layers.variance_scaling_initializer(seed=3))
        fan_out = tf.get_variable("fo", [300, 100], initializer=layers.variance_scaling_initializer(
            1.0, "FAN_OUT", True, seed=4))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            xavier, xavier_normal, he, fan_out = sess.run([xavier, xavier_normal, he, fan_out])
    limit = np.sqrt(6.0 / 600)
    assert np.abs(xavier).max() <= limit and np.abs(xavier).max() > 0.99 * limit
    np.testing.assert_allclose(xavier.std(), limit / np.sqrt(3), rtol=0.02)
    # contrib's normal draws: stddev sqrt(1.3 * factor / n) truncated at 2 stddevs (so the std is 0.8796 of it)
    for values, stddev in ((xavier_normal, np.sqrt(1.3 / 300)), (he, np.sqrt(1.3 * 2 / 360))):
        assert np.abs(values).max() <= 2 * stddev
        np.testing.assert_allclose(values.std(), 0.87962566 * stddev, rtol=0.03)
    assert np.abs(fan_out).max() <= np.sqrt(3.0 / 100)
    with pytest.raises(TypeError, match="Unknown mode"):
        layers.variance_scaling_initializer(mode="fan_in")


def test_layer_norm_normalizes_each_example_and_makes_beta_gamma():
    x_value = np.random.RandomState(0).randn(3, 4, 5).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.constant(x_value)
        y = layers.layer_norm(x)
        z = layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=1, center=False, scope="ln")
        assert _names(slim.get_model_variables()) == ["LayerNorm/beta", "LayerNorm/gamma", "ln/gamma"]
        assert slim.get_model_variables()[2].shape.as_list() == [4, 5]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            y, z = sess.run([y, z])
    flat = x_value.reshape(3, -1)
    want = ((flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-12)).reshape(x_value.shape)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    want = (x_value - x_value.mean(-1, keepdims=True)) / np.sqrt(x_value.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(z, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rank", [2, 4])
def test_batch_norm_with_updates_collections_none_updates_in_place(rank):
    """updates_collections=None: the moving averages are updated before the output is produced, and nothing goes
    to UPDATE_OPS; TF's fused kernel (2-D inputs as [N, 1, 1, C] too) updates the variance with n / (n - 1)."""
    shape = [6, 3] if rank == 2 else [2, 3, 2, 3]
    x_value = np.random.RandomState(1).randn(*shape).astype(np.float32)
    with tf.Graph().as_default():
        y = slim.batch_norm(tf.constant(x_value), decay=0.5, updates_collections=None, is_training=True)
        assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
        mean, variance = slim.get_variables("BatchNorm/moving")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(y)
            mean, variance = sess.run([mean, variance])
    flat = x_value.reshape(-1, 3)
    np.testing.assert_allclose(mean, 0.5 * flat.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(variance, 0.5 + 0.5 * flat.var(0, ddof=1), rtol=1e-5)


def test_batch_norm_with_its_own_updates_collection():
    with tf.Graph().as_default():
        slim.batch_norm(tf.zeros([2, 2, 2, 3]), updates_collections="my_updates")
        assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
        assert len(tf.get_collection("my_updates")) == 2


def test_dropout_embed_sequence_and_pooling():
    x_value = np.random.RandomState(2).rand(2, 4, 4, 3).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.constant(x_value)
        kept = slim.dropout(x, 0.5, is_training=False)
        dropped = slim.dropout(x, 0.5, seed=1)
        pooled = [slim.max_pool2d(x, [2, 2]), slim.avg_pool2d(x, 3, stride=1, padding="SAME")]
        want = [tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "SAME")]
        ids = tf.constant([[0, 2], [1, 1]])
        embedded = layers.embed_sequence(ids, vocab_size=3, embed_dim=2)
        assert pooled[0].op.name == "MaxPool2D/MaxPool"
        assert _names(slim.get_model_variables()) == ["EmbedSequence/embeddings"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            kept, dropped, pooled, want, embedded, table = sess.run(
                [kept, dropped, pooled, want, embedded, slim.get_model_variables()[0]])
    np.testing.assert_array_equal(kept, x_value)
    assert set(np.unique(np.round(dropped / x_value, 4))) <= {0.0, 2.0}
    for got, expected in zip(pooled, want):
        np.testing.assert_allclose(got, expected)
    np.testing.assert_array_equal(embedded, table[[[0, 2], [1, 1]]])


def test_slim_losses_take_predictions_first():
    logits = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]], np.float32)
    labels = np.array([[0, 1, 0], [0, 0, 1]], np.float32)
    with tf.Graph().as_default():
        got = [slim.losses.softmax_cross_entropy(logits, labels),
               slim.losses.sparse_softmax_cross_entropy(logits, np.array([1, 2])),
               slim.losses.mean_squared_error(logits, labels), slim.losses.hinge_loss(logits, labels)]
        want = [tf.losses.softmax_cross_entropy(labels, logits),
                tf.losses.sparse_softmax_cross_entropy(np.array([1, 2]), logits),
                tf.losses.mean_squared_error(labels, logits)]
        total = slim.losses.get_total_loss()
        with tf.Session() as sess:
            got, want, total = sess.run([got, want, total])
    np.testing.assert_allclose(got[:3], want, rtol=1e-6)
    np.testing.assert_allclose(got[3], np.maximum(0, 1 - (2 * labels - 1) * logits))
    np.testing.assert_allclose(total, sum(want) * 2, rtol=1e-6)


def test_separable_conv2d_without_num_outputs_is_depthwise_only():
    """slim.separable_conv2d(x, None, ...) (MobileNet's depthwise layers): depthwise_weights and biases over
    in_channels * depth_multiplier channels, no pointwise step."""
    x_value = np.random.RandomState(3).randn(2, 5, 5, 3).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.constant(x_value)
        y = slim.separable_conv2d(x, None, [3, 3], depth_multiplier=2, stride=2, activation_fn=None,
                                  biases_initializer=tf.constant_initializer(0.5))
        assert _names(slim.get_model_variables()) == ["SeparableConv2d/depthwise_weights", "SeparableConv2d/biases"]
        w = slim.get_model_variables()[0]
        want = tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME") + 0.5
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, want = sess.run([y, want])
    assert got.shape == (2, 3, 3, 6)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_optimize_loss_steps_clips_and_counts():
    """optimize_loss with a float learning rate (the variable OptimizeLoss/learning_rate), an optimizer by name,
    clipping by global norm and a gradient multiplier, against the same SGD step in numpy."""
    x_value = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=np.array([[0.5], [-0.5]], np.float32))
        b = tf.get_variable("b", initializer=np.array([0.0], np.float32))
        loss = tf.reduce_mean(tf.square(tf.matmul(x_value, w) + b - 1.0))
        step = tf.train.get_or_create_global_step()
        train = layers.optimize_loss(loss, step, 0.1, "SGD", clip_gradients=1.0, gradient_multipliers={"b:0": 2.0},
                                     summaries=[])
        assert "OptimizeLoss/learning_rate" in _names(tf.global_variables())
        grads = tf.gradients(loss, [w, b])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            gw, gb = sess.run(grads)
            before, _ = sess.run([train, step])
            w_after, b_after, step_after = sess.run([w, b, step])
    gb = gb * 2.0
    norm = np.sqrt((gw ** 2).sum() + (gb ** 2).sum())
    factor = min(1.0, 1.0 / norm)
    np.testing.assert_allclose(w_after, np.array([[0.5], [-0.5]]) - 0.1 * gw * factor, rtol=1e-5)
    np.testing.assert_allclose(b_after, -0.1 * gb * factor, rtol=1e-5)
    assert step_after == 1 and before > 0
    with tf.Graph().as_default(), pytest.raises(ValueError, match="Optimizer name should be one of"):
        layers.optimize_loss(tf.constant(1.0) * tf.get_variable("v", []), None, 0.1, "Sgd")
