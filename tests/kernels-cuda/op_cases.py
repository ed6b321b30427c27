"""Ops run on a device and on the CPU with the same inputs: one case per op family member, each for the dtypes
it applies to. Used by the GPU comparison tests and, to keep the table itself honest, on the numpy stand-in."""

import zlib

import numpy as np

import tensorweave as tf
from tensorweave.extension import apply_op
from tensorweave.ops.broadcast_gradient_ops import broadcast_gradient_args

FLOATS = ("float16", "float32", "float64")
INTS = ("int32", "int64")
COMPLEX = ("complex64", "complex128")
TOLERANCE = {"float16": (2e-2, 2e-2), "float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12), "complex64": (1e-4, 1e-5),
             "complex128": (1e-10, 1e-12)}


class Case:
    """``fn(*placeholders)`` -> tensor or list of tensors, fed inputs of ``shapes`` drawn as ``kind``."""

    def __init__(self, name, fn, shapes, dtypes=FLOATS, kind="normal", dynamic=False):
        self.name, self.fn, self.shapes, self.dtypes, self.kind = name, fn, shapes, dtypes, kind
        self.dynamic = dynamic  # True: placeholders of unknown dims ("rank": of unknown rank), so shape ops run


def _grad(f):
    """d/dx sum(sin(f(x))): the op's gradient kernels (and Cos) on the same device."""
    return lambda x: tf.gradients(tf.reduce_sum(tf.sin(f(x))), x)[0]


def _pool3d_ops(x):
    """MaxPool3D, AvgPool3D, their gradient ops and MaxPool3DGradGrad."""
    attrs = {"ksize": [1, 2, 2, 2, 1], "strides": [1, 1, 2, 2, 1], "padding": "SAME", "data_format": "NDHWC"}
    top, mean = tf.nn.max_pool3d(x, [2, 2, 2], [1, 2, 2], "SAME"), tf.nn.avg_pool3d(x, [3, 2, 2], [2, 1, 1], "VALID")
    return [top, mean, *tf.gradients(tf.reduce_sum(tf.sin(top)) + tf.reduce_sum(tf.sin(mean)), x),
            apply_op("MaxPool3DGradGrad", [x, top, tf.sin(x)], attrs)]


def inputs_for(case, dtype, rng):
    out = []
    for shape in case.shapes:
        if case.kind == "positive":
            v = rng.uniform(0.5, 2.0, shape)
        elif case.kind == "int" or np.dtype(dtype).kind in "iu":
            v = rng.integers(1 if case.kind == "nonzero" else -5, 6, shape)
        elif case.kind == "nonzero":
            v = rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)
        elif case.kind == "nans":  # a third NaN, a row of NaNs and a NaN beside -inf
            v = np.where(rng.uniform(size=shape) < 0.3, np.nan, rng.standard_normal(shape))
            v[0], v[1, :2] = np.nan, [np.nan, -np.inf]
        else:
            v = rng.standard_normal(shape)
        out.append(np.asarray(v).astype(dtype))
    return out


_IDS = [0, 2, 1, 2]

CASES = [
    # elementwise, one input
    *[Case(name, fn, [(3, 5)]) for name, fn in [
        ("neg", tf.negative), ("abs", tf.abs), ("square", tf.square), ("tanh", tf.tanh), ("exp", tf.exp),
        ("sigmoid", tf.sigmoid), ("sin", tf.sin), ("cos", tf.cos), ("floor", tf.floor), ("ceil", tf.ceil),
        ("round", tf.round), ("rint", tf.rint), ("sign", tf.sign), ("expm1", tf.expm1), ("relu", tf.nn.relu), ("relu6", tf.nn.relu6),
        ("elu", tf.nn.elu), ("selu", tf.nn.selu), ("softplus", tf.nn.softplus), ("softsign", tf.nn.softsign),
        ("leaky_relu", lambda x: tf.nn.leaky_relu(x, 0.3)), ("is_finite", tf.is_finite),
        ("check_numerics", lambda x: tf.check_numerics(x, "m")), ("tan", tf.tan), ("atan", tf.atan),
        ("sinh", tf.sinh), ("cosh", tf.cosh), ("asinh", tf.asinh),
        ("asin_acos_atanh", lambda x: [tf.asin(tf.tanh(x)), tf.acos(tf.tanh(x)), tf.atanh(tf.tanh(x) * 0.9)]),
        ("acosh", lambda x: tf.acosh(tf.abs(x) + 1))]],
    *[Case(name, fn, [(3, 5)], kind="positive") for name, fn in [
        ("log", tf.log), ("log1p", tf.log1p), ("sqrt", tf.sqrt), ("rsqrt", tf.rsqrt), ("reciprocal", tf.reciprocal)]],
    *[Case(name, fn, [(4, 3)], dtypes=INTS) for name, fn in [
        ("neg_int", tf.negative), ("abs_int", tf.abs), ("square_int", tf.square), ("sign_int", tf.sign)]],
    # elementwise, two or more inputs (broadcasting)
    *[Case(name, fn, [(3, 5), (5,)], dtypes=FLOATS + INTS) for name, fn in [
        ("add", tf.add), ("sub", tf.subtract), ("mul", tf.multiply), ("maximum", tf.maximum),
        ("minimum", tf.minimum), ("squared_difference", tf.squared_difference), ("less", tf.less),
        ("equal", tf.equal), ("greater_equal", tf.greater_equal)]],
    Case("realdiv", tf.realdiv, [(3, 5), (5,)], kind="nonzero"),
    Case("atan2", tf.atan2, [(3, 5), (5,)]),
    Case("div_no_nan", lambda x, y: tf.div_no_nan(x, y * tf.cast(y > 0, y.dtype)), [(3, 5), (3, 5)]),
    Case("pow", tf.pow, [(3, 5), (3, 5)], kind="positive"),
    *[Case(name, fn, [(4, 3), (4, 3)], dtypes=INTS, kind="nonzero") for name, fn in [
        ("floordiv", tf.floordiv), ("floormod", tf.floormod), ("truncatediv", tf.truncatediv),
        ("truncatemod", tf.truncatemod)]],
    Case("logical", lambda x, y: tf.logical_or(tf.logical_and(x > 0, y > 0), tf.logical_not(x > y)),
         [(4, 3), (4, 3)]),
    Case("select", lambda x, y: tf.where(x > y, x, y), [(4, 3), (4, 3)], dtypes=FLOATS + INTS),
    Case("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 0.5), [(4, 3)]),
    Case("add_n", lambda x, y: tf.add_n([x, y, x]), [(4, 3), (4, 3)], dtypes=FLOATS + INTS),
    Case("cast", lambda x: [tf.cast(x, tf.int32), tf.cast(x, tf.float64), tf.cast(x > 0, tf.float32)], [(4, 3)]),
    # reductions and scans
    Case("reductions", lambda x: [tf.reduce_sum(x, 1), tf.reduce_mean(x, [0, 2]), tf.reduce_max(x, 2, keepdims=True),
                                  tf.reduce_min(x), tf.reduce_prod(x, 0), tf.argmax(x, 1), tf.argmin(x, 2)],
         [(3, 4, 5)], dtypes=FLOATS + INTS),
    Case("argmax_skips_nans", lambda x: [tf.argmax(x, 1), tf.argmin(x, 1), tf.argmax(x, 0), tf.argmin(x, 0)],
         [(6, 5)], kind="nans"),
    Case("euclidean_norm", lambda x: [tf.math.reduce_euclidean_norm(x, 1), tf.math.reduce_euclidean_norm(x)],
         [(4, 6)]),
    Case("roll", lambda x: tf.roll(x, [1, -2], [0, 1]), [(4, 6)], dtypes=FLOATS + INTS),
    Case("bitwise", lambda x, y: [tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y),
                                  tf.bitwise.bitwise_xor(x, y), tf.bitwise.invert(x),
                                  tf.bitwise.left_shift(x, tf.abs(y)), tf.bitwise.right_shift(x, tf.abs(y)),
                                  tf.bitcast(x, tf.uint8)], [(4, 3), (4, 3)], dtypes=INTS),
    Case("all_any", lambda x: [tf.reduce_all(x > 0, 1), tf.reduce_any(x > 1, 0)], [(4, 6)]),
    Case("cumulative", lambda x: [tf.cumsum(x, 1), tf.cumsum(x, 0, exclusive=True, reverse=True),
                                  tf.cumprod(x, 1)], [(3, 4)], dtypes=FLOATS + INTS),
    # products
    Case("matmul", lambda a, b: [tf.matmul(a, b), tf.matmul(b, a, transpose_a=True, transpose_b=True)],
         [(6, 7), (7, 6)]),
    Case("batch_matmul", lambda a, b: tf.matmul(a, b, adjoint_b=True), [(2, 3, 4), (2, 5, 4)]),
    # shapes, slicing, gathering
    Case("shape_ops", lambda x: [tf.reshape(x, [6, -1]), tf.transpose(x, [2, 0, 1]), tf.expand_dims(x, 1),
                                 tf.squeeze(tf.expand_dims(x, 0)), tf.shape(x), tf.size(x), tf.rank(x),
                                 tf.broadcast_to(x[:1], [3, 4, 5])], [(3, 4, 5)], dtypes=FLOATS + INTS),
    Case("concat_split", lambda x, y: [tf.concat([x, y], 1), tf.stack([x, y], 2), *tf.unstack(x, axis=1),
                                       *tf.split(y, [1, 3], 1), *tf.split(x, 2, 0)],
         [(4, 4), (4, 4)], dtypes=FLOATS + INTS),
    Case("slicing", lambda x: [x[1:3, ::2], x[::-1, 1], tf.slice(x, [1, 0], [2, -1]), tf.reverse(x, [0, 1])],
         [(4, 5)], dtypes=FLOATS + INTS),
    Case("pad_tile", lambda x: [tf.pad(x, [[1, 2], [0, 1]]), tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT"),
                                tf.pad(x, [[1, 1], [1, 0]], mode="SYMMETRIC", constant_values=0),
                                tf.tile(x, [2, 3])], [(3, 4)], dtypes=FLOATS + INTS),
    Case("gather", lambda x: [tf.gather(x, _IDS), tf.gather(x, [1, 0], axis=1), tf.gather_nd(x, [[0, 1], [2, 3]]),
                              tf.one_hot(_IDS, 4, on_value=x[0, 0], off_value=x[1, 1])],
         [(3, 4)], dtypes=FLOATS + INTS),
    Case("scatter_nd", lambda u: tf.scatter_nd([[1], [3], [1]], u, [5, 2]), [(3, 2)], dtypes=FLOATS + INTS),
    Case("where", lambda x: tf.where(x > 0), [(4, 5)]),
    Case("fill_like", lambda x: [tf.zeros_like(x), tf.ones_like(x), tf.fill([2, 3], x[0, 0])], [(2, 3)],
         dtypes=FLOATS + INTS),
    Case("partition_stitch", lambda x: [*tf.dynamic_partition(x, [1, 0, 1, 2], 3),
                                        tf.dynamic_stitch([[0, 2], [1, 3]], [x[:2], x[2:]])],
         [(4, 3)], dtypes=FLOATS + INTS),
    Case("segments", lambda x: [tf.unsorted_segment_sum(x, _IDS, 3), tf.segment_sum(x, [0, 0, 1, 3])], [(4, 3)],
         dtypes=FLOATS + INTS),
    Case("unique", lambda x: list(tf.unique_with_counts(tf.reshape(x, [-1]))), [(3, 4)], dtypes=INTS),
    Case("range", lambda x: tf.range(1, tf.reduce_sum(tf.abs(x)) + 3, 2), [(2,)], dtypes=INTS),
    Case("top_k", lambda x: list(tf.nn.top_k(x, 3)) + [tf.nn.in_top_k(tf.cast(x, tf.float32), [0, 1, 2], 2)],
         [(3, 6)], dtypes=("float32", "float64") + INTS),
    # nn
    Case("softmax", lambda x: [tf.nn.softmax(x), tf.nn.log_softmax(x), tf.nn.l2_loss(x)], [(4, 7)]),
    Case("xent", lambda x, y: [tf.nn.softmax_cross_entropy_with_logits(labels=tf.nn.softmax(y), logits=x),
                               tf.nn.sparse_softmax_cross_entropy_with_logits(labels=_IDS, logits=x)],
         [(4, 7), (4, 7)]),
    Case("bias_add", lambda x, b: [tf.nn.bias_add(x, b), tf.nn.bias_add(tf.transpose(x, [0, 3, 1, 2]), b,
                                                                      data_format="NCHW")],
         [(2, 3, 3, 4), (4,)]),
    Case("pooling", lambda x: [tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                               tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),
                               tf.nn.max_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], [[0, 0], [2, 1], [0, 1], [0, 0]])],
         [(2, 5, 5, 3)]),
    Case("conv2d", lambda x, w: [tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"),
                                 tf.nn.conv2d(x, w, [1, 2, 2, 1], "VALID")], [(2, 6, 6, 3), (3, 3, 3, 4)]),
    Case("conv2d_explicit_padding", lambda x, w: [
        tf.nn.conv2d(x, w, [1, 2, 1, 1], [[0, 0], [2, 1], [0, 3], [0, 0]]),
        tf.nn.conv2d(tf.transpose(x, [0, 3, 1, 2]), w, 1, [[0, 0], [0, 0], [1, 0], [0, 2]], data_format="NCHW"),
        *tf.gradients(tf.reduce_sum(tf.sin(tf.nn.conv2d(x, w, 1, [[0, 0], [3, 0], [1, 1], [0, 0]]))), [x, w])],
        [(2, 6, 5, 3), (3, 2, 3, 4)]),
    Case("lrn", lambda x: tf.nn.lrn(x, 2, 1.0, 0.1, 0.75), [(2, 3, 3, 6)], dtypes=("float32", "float64")),
    Case("image_resize", lambda x: [tf.image.resize_bilinear(x, [5, 7]), tf.image.resize_nearest_neighbor(x, [2, 5]),
                                    tf.image.resize_bicubic(x, [5, 3], align_corners=True), tf.image.resize_area(x, [2, 3]),
                                    _grad(lambda t: tf.image.resize_bilinear(t, [5, 7]))(x),
                                    _grad(lambda t: tf.image.resize_bicubic(t, [6, 2]))(x),
                                    _grad(lambda t: tf.image.resize_nearest_neighbor(t, [7, 5]))(x)],
         [(2, 3, 4, 2)], dtypes=("float32", "float64")),
    Case("image_color", lambda x: [tf.image.rgb_to_hsv(x), tf.image.hsv_to_rgb(x), tf.image.adjust_contrast(x, 1.5),
                                   tf.image.adjust_hue(x, 0.3), tf.image.adjust_saturation(x, 0.6)],
         [(2, 3, 4, 3)], dtypes=("float32",), kind="positive"),
    # gradients
    Case("grad_activations", _grad(lambda x: tf.nn.relu(x) + tf.tanh(x) + tf.sigmoid(x) + tf.nn.elu(x)
                                   + tf.nn.softplus(x) + tf.nn.relu6(x * 4)), [(4, 5)]),
    Case("grad_sqrt_rsqrt", _grad(lambda x: tf.sqrt(x) + tf.rsqrt(x) + tf.reciprocal(x)), [(4, 5)], kind="positive"),
    Case("grad_matmul_bias", lambda x, w, b: tf.gradients(tf.reduce_sum(tf.sin(tf.nn.bias_add(tf.matmul(x, w), b))),
                                                          [x, w, b]), [(4, 5), (5, 3), (3,)]),
    Case("grad_xent", lambda x: tf.gradients(tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=_IDS, logits=x)), x)[0], [(4, 7)]),
    Case("grad_pool_conv", lambda x, w: tf.gradients(tf.reduce_sum(tf.sin(tf.nn.max_pool(
        tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))), [x, w]),
        [(2, 6, 6, 3), (3, 3, 3, 4)], dtypes=("float32", "float64")),
    Case("grad_avg_pool", _grad(lambda x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")), [(2, 4, 4, 3)]),
    Case("grad_more_activations", _grad(lambda x: tf.nn.selu(x) + tf.nn.softsign(x) + tf.nn.leaky_relu(x, 0.2)),
         [(4, 5)]),
    Case("grad_lrn", _grad(lambda x: tf.nn.lrn(x, 2, 1.0, 0.1, 0.75)), [(2, 3, 3, 6)], dtypes=("float32", "float64")),
    Case("depthwise_conv", lambda x, w: [tf.nn.depthwise_conv2d(x, w, [1, 2, 1, 1], "SAME"), *tf.gradients(
        tf.reduce_sum(tf.sin(tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID", rate=[1, 2]))), [x, w])],
         [(2, 5, 6, 3), (2, 3, 3, 2)]),
    Case("conv3d", lambda x, w: [tf.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME"), *tf.gradients(
        tf.reduce_sum(tf.sin(tf.nn.conv3d(x, w, [1, 1, 1, 2, 1], "VALID"))), [x, w])], [(2, 4, 3, 5, 2), (2, 2, 2, 2, 3)]),
    Case("pool3d", lambda x: _pool3d_ops(x), [(2, 4, 5, 4, 3)]),
    Case("depth_space", lambda x: [tf.depth_to_space(x, 2), tf.nn.space_to_depth(x, 2, data_format="NCHW")],
         [(2, 4, 6, 8)], dtypes=FLOATS + INTS),
    Case("grad_pad_slice", _grad(lambda x: tf.reduce_sum(tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT"))
                                 + tf.reduce_sum(x[1:3, ::2])), [(4, 5)]),
    # the plan runs the gradients' own BroadcastGradientArgs as part of _SumToShape: fetched, this one runs alone
    Case("grad_broadcast", lambda x, y: [*tf.gradients(tf.reduce_sum(tf.sin(x * y + x)), [x, y]),
                                         *broadcast_gradient_args(tf.shape(x), tf.shape(y))],
         [(3, 5), (5,)], dynamic=True),
    Case("sum_to_shape", lambda g, x: [
        apply_op("_SumToShape", [g, tf.shape(x)], {"fused_names": []}, name="sum_to_shape"),
        apply_op("_SumToShape", [g, tf.shape(g)], {"fused_names": []}, name="sum_to_own_shape")],
        [(3, 4, 5), (4, 1)], dtypes=FLOATS + INTS, dynamic=True),
    Case("max_pool_grad_grad", lambda x: apply_op("MaxPoolGradGrad", [x, tf.nn.max_pool(
        x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), x * 0.5], {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                                           "padding": "VALID"}), [(2, 4, 4, 3)]),
    # the rest of the ops with a GPU kernel
    Case("dynamic_shapes", lambda x: [tf.shape(x), tf.size(x), *tf.shape_n([x, x[0]]),
                                      tf.broadcast_dynamic_shape(tf.shape(x), tf.shape(x[:1])),
                                      tf.ensure_shape(x, [3, None]), tf.zeros_like(x), tf.ones_like(x)],
         [(3, 4)], dtypes=FLOATS + INTS, dynamic=True),
    Case("rank", lambda x: tf.rank(x), [(3, 4)], dtypes=("float32",), dynamic="rank"),
    Case("complex", lambda x: [tf.conj(x), x * x + x, tf.reduce_sum(x, 0)], [(3, 4)], dtypes=COMPLEX),
    Case("special_values", lambda x: [tf.is_inf(x / (x - x)), tf.is_nan((x - x) / (x - x)), tf.conj(x),
                                      tf.less_equal(x, x * x), tf.not_equal(x, tf.floor(x))], [(3, 4)],
         kind="nonzero"),
    Case("identities", lambda x: [tf.identity(x), *tf.identity_n([x, x * 2]), tf.stop_gradient(x),
                                  apply_op("PreventGradient", [x]), apply_op("Snapshot", [x]),
                                  tf.placeholder_with_default(x, [3, 4])], [(3, 4)], dtypes=FLOATS + INTS),
    Case("v1_forms", lambda x, y: [apply_op("Concat", [tf.constant(1), [x, y]]), apply_op("Gather", [x, _IDS[:2]]),
                                   apply_op("BatchMatMul", [tf.reshape(x, [1, 3, 4]), tf.reshape(y, [1, 4, 3])]),
                                   tf.where_v2(x > 0, x, y), tf.pad(x, [[1, 1], [0, 2]], constant_values=3)],
         [(3, 4), (3, 4)]),
    Case("permutations", lambda x: [tf.invert_permutation(tf.nn.top_k(x, 4)[1]),
                                    tf.reverse_sequence(tf.reshape(x, [2, 2]), [2, 1], seq_axis=1, batch_axis=0)],
         [(4,)], dtypes=("float32", "float64")),
    Case("unique_values", lambda x: list(tf.unique(tf.reshape(x, [-1]))), [(3, 4)], dtypes=INTS),
    Case("qr", lambda a: (lambda qr: [tf.matmul(qr[0], qr[1]), tf.abs(qr[1])])(apply_op("Qr", [a])), [(5, 3)],
         dtypes=("float32", "float64")),
    Case("diagonals", lambda x, d: [tf.matrix_diag(d), tf.matrix_diag_part(x), tf.matrix_set_diag(x, d),
                                    tf.matrix_band_part(x, 1, 0), tf.matrix_band_part(x, -1, 2),
                                    tf.diag(d[0]), tf.diag_part(tf.reshape(x[0, :2, :2], [2, 2]))],
         [(2, 3, 4), (2, 3)], dtypes=FLOATS + INTS),
    Case("diagonals_grad", _grad(lambda x: tf.matrix_band_part(tf.matrix_set_diag(x, tf.matrix_diag_part(x) * 2.0),
                                                               0, 1)), [(2, 3, 4)]),
    Case("diagonal_bands", lambda x: [tf.linalg.diag(tf.linalg.diag_part(x, k=(-1, 2)), k=(-1, 2), num_rows=3),
                                      tf.linalg.set_diag(x, x[:, 0, 1:] * 2, k=1, align="LEFT_LEFT"),
                                      tf.linalg.diag_part(x, k=-1, padding_value=5)],
         [(2, 3, 4)], dtypes=FLOATS + INTS),
    Case("space_batch", lambda x: [tf.space_to_batch_nd(x, [2, 3], [[1, 1], [0, 3]]),
                                   tf.batch_to_space_nd(x, [2, 1], [[1, 0], [0, 2]]),
                                   tf.nn.convolution(x, tf.ones([2, 2, 3, 2], x.dtype), "SAME", dilation_rate=[2, 2])],
         [(2, 4, 6, 3)]),
]


def case_params():
    return [(case, dtype) for case in CASES for dtype in case.dtypes]


def case_id(param):
    case, dtype = param
    return f"{case.name}-{dtype}"


def holder_shape(case, value):
    return None if case.dynamic == "rank" else [None] * value.ndim if case.dynamic else value.shape


def run_case(case, dtype, device_type, soft=False):
    """(outputs on device_type:0, outputs on CPU:0) of ``case`` with the same fed inputs."""
    tf.reset_default_graph()
    rng = np.random.default_rng(zlib.crc32(f"{case.name}-{dtype}".encode()))
    values = inputs_for(case, dtype, rng)
    holders = [tf.placeholder(tf.as_dtype(v.dtype), holder_shape(case, v)) for v in values]
    outputs = {}
    for device in (f"/device:{device_type}:0", "/device:CPU:0"):
        with tf.device(device):
            out = case.fn(*holders)
        outputs[device] = list(out) if isinstance(out, (list, tuple)) else [out]
    config = tf.ConfigProto(allow_soft_placement=soft)
    with tf.Session(config=config) as s:
        got, want = s.run(list(outputs.values()), dict(zip(holders, values)))
    return got, want


def assert_same(got, want, dtype):
    rtol, atol = TOLERANCE.get(dtype, (0, 0))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, w.dtype, g.shape, w.shape)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g.astype(np.complex128), w.astype(np.complex128), rtol=rtol, atol=atol,
                                       err_msg=f"output {i}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"output {i}")


def variable_program(device):
    """(variable, update ops in order, count_up_to, VariableShape, is-initialized, gathered rows, destroy) on
    ``device``."""
    with tf.device(device):
        v = tf.Variable(np.arange(1.0, 9.0).reshape(4, 2), name="v")
        counter = tf.Variable(np.int32(0), name="counter")
        steps = [
            v.assign(np.full((4, 2), 2.0)),
            v.assign_add(np.ones((4, 2))),
            v.assign_sub(np.full((4, 2), 0.5)),
            tf.scatter_update(v, [3], [[7.0, 8.0]]),
            tf.scatter_add(v, [0, 0, 2], [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]),
            tf.scatter_sub(v, [1], [[0.5, 0.5]]),
            tf.scatter_mul(v, [2, 2], [[2.0, 3.0], [4.0, 5.0]]),
            tf.scatter_div(v, [0, 3, 0], [[2.0, 2.0], [4.0, 8.0], [5.0, 1.0]]),
            tf.scatter_min(v, [1], [[1.0, 9.0]]),
            tf.scatter_max(v, [3], [[0.0, 5.0]]),
            v[1:3, 0].assign([10.0, 20.0]),
        ]
        count = tf.count_up_to(counter, 3)
        shape = apply_op("VariableShape", [v.handle])
        initialized = tf.is_variable_initialized(v)
        rows = tf.nn.embedding_lookup(v, [3, 0, 3])
        destroy = apply_op("DestroyResourceOp", [v.handle])
    return v, steps, count, shape, initialized, rows, destroy


def run_variable_program(device, config):
    """Every value the variable program shows, in order; the last count_up_to must raise OutOfRangeError."""
    v, steps, count, shape, initialized, rows, destroy = variable_program(device)
    with tf.Session(config=config) as s:
        out = [s.run(initialized)]
        s.run(tf.global_variables_initializer())
        for step in steps:
            s.run(step)
            out.append(s.run(v.read_value()).copy())
        out += [s.run(count) for _ in range(3)]
        try:
            s.run(count)
            out.append("no error")
        except tf.errors.OutOfRangeError as e:
            out.append("Reached limit of 3" in str(e))
        out += [s.run(shape), s.run(initialized), s.run(rows)]
        s.run(destroy)
        out.append(s.run(initialized))  # a fresh, unassigned variable under the same name
    return out
