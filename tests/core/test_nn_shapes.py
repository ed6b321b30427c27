"""Static shapes of the nn ops, and the build-time errors that name the op and the user's line (no kernels)."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.window_geometry import window_geometry


@pytest.mark.parametrize("size,window,stride,dilation,padding,want", [
    (7, 3, 2, 1, "SAME", (4, 1, 1)),
    (8, 3, 2, 1, "SAME", (4, 0, 1)),    # the odd padding element goes after (bottom/right)
    (5, 4, 1, 1, "SAME", (5, 1, 2)),
    (6, 2, 2, 1, "SAME", (3, 0, 0)),
    (9, 3, 1, 2, "SAME", (9, 2, 2)),    # dilation widens the window to 5
    (9, 3, 2, 1, "VALID", (4, 0, 0)),
    (10, 2, 1, 3, "VALID", (7, 0, 0)),
    (3, 5, 1, 1, "SAME", (3, 2, 2)),
])
def test_window_geometry_follows_tf(size, window, stride, dilation, padding, want):
    assert window_geometry(size, window, stride, dilation, padding) == want


def test_conv_and_pool_shapes_in_both_formats():
    x = tf.placeholder(tf.float32, [None, 28, 28, 3])
    f = tf.placeholder(tf.float32, [5, 5, 3, 16])
    assert tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME").shape.as_list() == [None, 28, 28, 16]
    assert tf.nn.conv2d(x, f, [1, 2, 2, 1], "VALID").shape.as_list() == [None, 12, 12, 16]
    assert tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID", dilations=[1, 2, 2, 1]).shape.as_list() == [None, 20, 20, 16]
    xc = tf.placeholder(tf.float32, [8, 3, None, 28])
    assert tf.nn.conv2d(xc, f, [1, 1, 2, 2], "SAME", data_format="NCHW").shape.as_list() == [8, 16, None, 14]
    assert tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID").shape.as_list() == [None, 13, 13, 3]
    assert tf.nn.avg_pool(xc, [1, 1, 2, 2], [1, 1, 2, 2], "SAME", data_format="NCHW").shape.as_list() == [
        8, 3, None, 14]
    unknown = tf.placeholder(tf.float32)
    assert tf.nn.conv2d(unknown, f, [1, 1, 1, 1], "SAME").shape.as_list() == [None, None, None, 16]


def test_conv_backprop_shapes_come_from_the_size_tensors():
    f = tf.placeholder(tf.float32, [3, 3, 4, 8])
    dy = tf.placeholder(tf.float32, [2, 5, 5, 8])
    dx = tf.nn.conv2d_backprop_input([2, 10, 10, 4], f, dy, [1, 2, 2, 1], "SAME")
    assert dx.shape.as_list() == [2, 10, 10, 4]
    x = tf.placeholder(tf.float32, [2, 10, 10, 4])
    assert tf.nn.conv2d_backprop_filter(x, [3, 3, 4, 8], dy, [1, 2, 2, 1], "SAME").shape.as_list() == [3, 3, 4, 8]
    with pytest.raises(ValueError, match="out_backprop has shape"):
        tf.nn.conv2d_backprop_input([2, 10, 10, 4], f, dy, [1, 1, 1, 1], "SAME")
    up = tf.nn.conv2d_transpose(tf.placeholder(tf.float32, [2, 5, 5, 8]), f, [2, 10, 10, 4], [1, 2, 2, 1])
    assert up.shape.as_list() == [2, 10, 10, 4]
    with pytest.raises(ValueError, match="do not match the filter's last dimension 8"):
        tf.nn.conv2d_transpose(tf.placeholder(tf.float32, [2, 5, 5, 7]), f, [2, 10, 10, 4], [1, 2, 2, 1])


def test_conv_errors_name_the_op_and_the_user_line():
    x = tf.placeholder(tf.float32, [1, 8, 8, 3])
    with pytest.raises(ValueError) as info:
        tf.nn.conv2d(x, tf.placeholder(tf.float32, [3, 3, 2, 4]), [1, 1, 1, 1], "SAME", name="my_conv")
    assert "'my_conv' (Conv2D)" in str(info.value) and "test_nn_shapes.py" in str(info.value)
    with pytest.raises(ValueError, match="strides must have 4 elements"):
        apply_op("Conv2D", [x, tf.placeholder(tf.float32, [3, 3, 3, 4])], {"strides": [1, 1, 1], "padding": "SAME"})
    with pytest.raises(ValueError, match="data_format.* must be one of"):
        tf.nn.conv2d(x, tf.placeholder(tf.float32, [3, 3, 3, 4]), [1, 1, 1, 1], "SAME", data_format="NWHC")
    with pytest.raises(ValueError, match="data_format.* must be one of"):
        tf.nn.max_pool(x, 2, 2, "SAME", data_format="NWHC")
    with pytest.raises(TypeError, match="conv2d needs input, filter, strides and padding"):
        tf.nn.conv2d(x, tf.placeholder(tf.float32, [3, 3, 3, 4]))


def test_pool_grad_shapes():
    x = tf.placeholder(tf.float32, [2, 7, 7, 3])
    out = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
    assert apply_op("MaxPoolGrad", [x, out, out], attrs).shape.as_list() == [2, 7, 7, 3]
    assert apply_op("AvgPoolGrad", [[2, 7, 7, 3], out], attrs).shape.as_list() == [2, 7, 7, 3]
    assert apply_op("MaxPoolGradGrad", [x, out, x], attrs).shape.as_list() == [2, 4, 4, 3]
    with pytest.raises(ValueError, match="grad has shape"):
        apply_op("MaxPoolGrad", [x, out, x], attrs)


def test_elementwise_nn_ops_keep_their_shape_and_dtype():
    x = tf.placeholder(tf.float32, [None, 7])
    for fn in (tf.nn.relu, tf.nn.relu6, tf.nn.elu, tf.nn.selu, tf.nn.softplus, tf.nn.softsign, tf.nn.leaky_relu,
               tf.nn.softmax, tf.nn.log_softmax):
        y = fn(x)
        assert y.shape.as_list() == [None, 7] and y.dtype == tf.float32, fn.__name__
    assert tf.nn.relu(tf.placeholder(tf.int32, [3])).dtype == tf.int32
    with pytest.raises(TypeError, match="not in the allowed list"):
        tf.nn.elu(tf.placeholder(tf.int32, [3]))
    assert tf.nn.l2_loss(x).shape.as_list() == []


def test_bias_add_shapes():
    nhwc = tf.nn.bias_add(tf.placeholder(tf.float32, [None, 4, 4, 6]), tf.placeholder(tf.float32, [6]))
    assert nhwc.shape.as_list() == [None, 4, 4, 6]
    nchw = tf.nn.bias_add(tf.placeholder(tf.float32, [2, 6, 4, 4]), tf.placeholder(tf.float32, [6]), "NCHW")
    assert nchw.shape.as_list() == [2, 6, 4, 4]
    grad = apply_op("BiasAddGrad", [tf.placeholder(tf.float32, [2, 6, 4, 4])], {"data_format": "NCHW"})
    assert grad.shape.as_list() == [6]
    with pytest.raises(ValueError, match="bias has 4 elements but value has 6 channels"):
        tf.nn.bias_add(tf.placeholder(tf.float32, [2, 6, 4, 4]), tf.placeholder(tf.float32, [4]), "NCHW")
    with pytest.raises(ValueError, match="rank at least 2"):
        tf.nn.bias_add(tf.placeholder(tf.float32, [6]), tf.placeholder(tf.float32, [6]))


def test_fused_cross_entropy_shapes():
    logits = tf.placeholder(tf.float32, [None, 10])
    loss, backprop = apply_op("SoftmaxCrossEntropyWithLogits", [logits, tf.placeholder(tf.float32, [32, None])])
    assert loss.shape.as_list() == [32] and backprop.shape.as_list() == [32, 10]
    loss, backprop = apply_op("SparseSoftmaxCrossEntropyWithLogits", [logits, tf.placeholder(tf.int32, [None])])
    assert loss.shape.as_list() == [None] and backprop.shape.as_list() == [None, 10]
    assert tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.placeholder(tf.int64, [8]),
                                                          logits=logits).shape.as_list() == [8]
    with pytest.raises(ValueError, match="same shape"):
        apply_op("SoftmaxCrossEntropyWithLogits", [logits, tf.placeholder(tf.float32, [None, 9])])
    with pytest.raises(TypeError, match="labels must be int32 or int64"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.placeholder(tf.float32, [8]), logits=logits)
    with pytest.raises(ValueError, match="both labels and logits are needed"):
        tf.nn.softmax_cross_entropy_with_logits(logits=logits)


def test_top_k_and_in_top_k_shapes():
    x = tf.placeholder(tf.float32, [None, 5, 10])
    values, indices = tf.nn.top_k(x, 3)
    assert values.shape.as_list() == [None, 5, 3] and indices.shape.as_list() == [None, 5, 3]
    assert indices.dtype == tf.int32
    k = tf.placeholder(tf.int32, [])
    assert tf.nn.top_k(x, k)[0].shape.as_list() == [None, 5, None]
    with pytest.raises(ValueError, match="at least k=11 columns"):
        tf.nn.top_k(x, 11)
    hits = tf.nn.in_top_k(tf.placeholder(tf.float32, [None, 10]), tf.placeholder(tf.int64, [16]), 5)
    assert hits.shape.as_list() == [16] and hits.dtype == tf.bool


def test_dynamic_partition_and_stitch_shapes():
    parts = tf.dynamic_partition(tf.placeholder(tf.float32, [6, 4, 3]), tf.placeholder(tf.int32, [6, 4]), 2)
    assert [p.shape.as_list() for p in parts] == [[None, 3], [None, 3]]
    merged = tf.dynamic_stitch([np.array([0, 2], np.int32), np.array([[1], [3]], np.int32)],
                               [tf.placeholder(tf.float32, [2, 5]), tf.placeholder(tf.float32, [2, 1, 5])])
    assert merged.shape.as_list() == [4, 5]
    with pytest.raises(ValueError, match="must be a prefix"):
        tf.dynamic_partition(tf.placeholder(tf.float32, [6, 4]), tf.placeholder(tf.int32, [5]), 2)


def test_lrn_needs_rank_4():
    assert tf.nn.lrn(tf.placeholder(tf.float32, [None, 5, 5, 8])).shape.as_list() == [None, 5, 5, 8]
    with pytest.raises(ValueError, match="must have rank 4"):
        tf.nn.local_response_normalization(tf.placeholder(tf.float32, [5, 8]))


def test_candidate_sampler_shapes():
    sampled, true_count, sampled_count = tf.nn.log_uniform_candidate_sampler(
        tf.placeholder(tf.int64, [None, 2]), 2, 16, True, 1000)
    assert sampled.shape.as_list() == [16] and sampled.dtype == tf.int64
    assert true_count.shape.as_list() == [None, 2] and sampled_count.shape.as_list() == [16]
    with pytest.raises(ValueError, match="num_true is 1"):
        tf.nn.uniform_candidate_sampler(tf.placeholder(tf.int64, [None, 2]), 1, 16, True, 1000)
