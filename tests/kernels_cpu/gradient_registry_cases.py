"""How to build each op that has a registered gradient, for tests/kernels_cpu/test_gradient_registry.py.

``CASES`` maps an op type to a ``Case``: the shapes of the float inputs whose gradients are checked, and a
function of those inputs (placeholders or variables) that builds at least one op of that type and returns
float tensors. Integer operands (indices, axes, shapes) are constants inside the function. ``UNCHECKED``
names the ops with a gradient that the numeric check cannot cover, and why; ``BY_FRAMES`` the control-flow
primitives that every case's frames (tf.cond, tf.while_loop) exercise.
"""

from dataclasses import dataclass

import numpy as np

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op


@dataclass(frozen=True)
class Case:
    shapes: tuple
    build: object
    positive: bool = False  # inputs in (0.3, 1.5) instead of +-(0.3, 1.5)
    values: tuple = None  # fixed input values instead of random ones
    kinds: tuple = ("fed", "variable")  # placeholders fed each run; variables read where the op is built
    delta: float = 1e-6
    tolerance: float = 1e-6


def op(op_type, inputs, **attrs):
    return apply_op(op_type, inputs, attrs)


POOL = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NHWC"}
CONV = {"strides": [1, 1, 1, 1], "padding": "SAME"}
POOL3D = {"ksize": [1, 2, 2, 2, 1], "strides": [1, 1, 2, 1, 1], "padding": "SAME", "data_format": "NDHWC"}
LABELS = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])


def _max_pool(x):
    return tf.nn.max_pool(x, POOL["ksize"], POOL["strides"], POOL["padding"])


def _tensor_array(n):
    return tf.TensorArray(tf.float64, size=n)


CASES = {
    # ---- elementwise math
    "Abs": Case([(2, 3)], tf.abs),
    "Cos": Case([(2, 3)], tf.cos),
    "Exp": Case([(2, 3)], tf.exp),
    "Expm1": Case([(2, 3)], tf.expm1),
    "Log": Case([(2, 3)], tf.log, positive=True),
    "Log1p": Case([(2, 3)], tf.log1p, positive=True),
    "Neg": Case([(2, 3)], tf.negative),
    "Reciprocal": Case([(2, 3)], tf.reciprocal),
    "Rsqrt": Case([(2, 3)], tf.rsqrt, positive=True),
    "Sigmoid": Case([(2, 3)], tf.sigmoid),
    "Sign": Case([(2, 3)], tf.sign),
    "Sin": Case([(2, 3)], tf.sin),
    "Sqrt": Case([(2, 3)], tf.sqrt, positive=True),
    "Square": Case([(2, 3)], tf.square),
    "Tanh": Case([(2, 3)], tf.tanh),
    "Cast": Case([(2, 3)], lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64), delta=1e-2, tolerance=1e-4),
    "Conj": Case([(2, 3)], lambda x: tf.cast(tf.conj(tf.cast(x, tf.complex128)), tf.float64)),
    "Add": Case([(2, 3), (3,)], tf.add),
    "Sub": Case([(2, 1), (1, 3)], tf.subtract),
    "Mul": Case([(2, 3), (2, 1)], tf.multiply),
    "RealDiv": Case([(2, 3), (3,)], tf.realdiv),
    "DivNoNan": Case([(2, 3), (3,)], tf.div_no_nan),
    "Maximum": Case([(2, 3), (3,)], tf.maximum),
    "Minimum": Case([(2, 3), (3,)], tf.minimum),
    "Pow": Case([(2, 3), (3,)], tf.pow, positive=True),
    "SquaredDifference": Case([(2, 3), (3,)], tf.squared_difference),
    "FloorMod": Case([(2, 3), (3,)], tf.floormod),
    "TruncateMod": Case([(2, 3), (3,)], tf.truncatemod),
    "AddN": Case([(2, 3), (2, 3), (2, 3)], lambda a, b, c: tf.add_n([a, b, c])),
    "ClipByValue": Case([(2, 3), (), ()], tf.clip_by_value,
                        values=(np.array([[-1.2, -0.4, 0.1], [0.5, 0.9, 1.4]]), np.array(-0.5), np.array(0.7))),
    "Select": Case([(2, 3), (2, 3)], lambda a, b: tf.where(tf.constant([[True, False, True], [False, False, True]]),
                                                            a, b)),
    "SelectV2": Case([(2, 3), (3,)], lambda a, b: tf.where_v2(tf.constant([[True], [False]]), a, b)),
    # ---- neural-network elementwise ops and their gradients (second order)
    "Elu": Case([(2, 3)], tf.nn.elu),
    "Relu": Case([(2, 3)], tf.nn.relu),
    "Relu6": Case([(2, 3)], lambda x: tf.nn.relu6(x * 5.0)),
    "Selu": Case([(2, 3)], tf.nn.selu),
    "LeakyRelu": Case([(2, 3)], lambda x: tf.nn.leaky_relu(x, 0.3)),
    "Softplus": Case([(2, 3)], tf.nn.softplus),
    "Softsign": Case([(2, 3)], tf.nn.softsign),
    "EluGrad": Case([(2, 3), (2, 3)], lambda g, y: op("EluGrad", [g, y])),
    "SeluGrad": Case([(2, 3), (2, 3)], lambda g, y: op("SeluGrad", [g, y])),
    "ReluGrad": Case([(2, 3), (2, 3)], lambda g, x: op("ReluGrad", [g, x])),
    "Relu6Grad": Case([(2, 3), (2, 3)], lambda g, x: op("Relu6Grad", [g, x * 5.0])),
    "LeakyReluGrad": Case([(2, 3), (2, 3)], lambda g, x: op("LeakyReluGrad", [g, x], alpha=0.3)),
    "SoftplusGrad": Case([(2, 3), (2, 3)], lambda g, x: op("SoftplusGrad", [g, x])),
    "SoftsignGrad": Case([(2, 3), (2, 3)], lambda g, x: op("SoftsignGrad", [g, x])),
    "SigmoidGrad": Case([(2, 3), (2, 3)], lambda y, g: op("SigmoidGrad", [y, g])),
    "TanhGrad": Case([(2, 3), (2, 3)], lambda y, g: op("TanhGrad", [y, g])),
    "SqrtGrad": Case([(2, 3), (2, 3)], lambda y, g: op("SqrtGrad", [y, g]), positive=True),
    "RsqrtGrad": Case([(2, 3), (2, 3)], lambda y, g: op("RsqrtGrad", [y, g])),
    "ReciprocalGrad": Case([(2, 3), (2, 3)], lambda y, g: op("ReciprocalGrad", [y, g])),
    "Softmax": Case([(2, 3)], tf.nn.softmax),
    "LogSoftmax": Case([(2, 3)], tf.nn.log_softmax),
    "L2Loss": Case([(2, 3)], tf.nn.l2_loss),
    "SoftmaxCrossEntropyWithLogits": Case(
        [(2, 3), (2, 3)], lambda z, y: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=z),
        values=(None, LABELS)),
    "SparseSoftmaxCrossEntropyWithLogits": Case(
        [(2, 3)], lambda z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([2, 0]), logits=z)),
    "BiasAdd": Case([(2, 3), (3,)], tf.nn.bias_add),
    "BiasAddGrad": Case([(2, 3)], lambda g: op("BiasAddGrad", [g])),
    "LRN": Case([(1, 2, 2, 4)], lambda x: tf.nn.lrn(x, depth_radius=2, bias=1.0, alpha=0.5, beta=0.75)),
    # ---- matrix products, pooling, convolution
    "MatMul": Case([(2, 3), (3, 2)], lambda a, b: [tf.matmul(a, b), tf.matmul(a, b, transpose_a=True,
                                                                               transpose_b=True)]),
    "BatchMatMul": Case([(2, 2, 3), (2, 3, 2)], lambda a, b: [op("BatchMatMul", [a, b]),
                                                             op("BatchMatMul", [a, b], adj_x=True, adj_y=True)]),
    "BatchMatMulV2": Case([(2, 2, 3), (3, 2)], lambda a, b: tf.matmul(a, b)),
    "AvgPool": Case([(1, 4, 4, 2)], lambda x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")),
    "AvgPoolGrad": Case([(1, 2, 2, 2)], lambda g: op("AvgPoolGrad", [tf.constant([1, 4, 4, 2]), g],
                                                     ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")),
    "MaxPool": Case([(1, 3, 3, 2)], _max_pool),
    "MaxPoolGrad": Case([(1, 3, 3, 2), (1, 3, 3, 2)], lambda x, g: op("MaxPoolGrad", [x, _max_pool(x), g], **POOL)),
    "MaxPoolGradGrad": Case([(1, 3, 3, 2), (1, 3, 3, 2)],
                            lambda x, g: op("MaxPoolGradGrad", [x, _max_pool(x), g], **POOL)),
    "Conv2D": Case([(1, 3, 3, 2), (2, 2, 2, 3)], lambda x, f: tf.nn.conv2d(x, f, **CONV)),
    # the resizes compute in float32 (and return it), so their differences are float32's
    "ResizeBilinear": Case([(1, 2, 3, 2)], lambda x: tf.cast(tf.image.resize_bilinear(x, [3, 4]), tf.float64),
                           delta=1e-2, tolerance=1e-4),
    "ResizeBicubic": Case([(1, 3, 3, 1)], lambda x: tf.cast(tf.image.resize_bicubic(x, [4, 2], align_corners=True),
                                                            tf.float64), delta=1e-2, tolerance=1e-4),
    "ResizeNearestNeighbor": Case([(1, 2, 3, 2)], lambda x: tf.image.resize_nearest_neighbor(x, [3, 5])),
    "ResizeNearestNeighborGrad": Case([(1, 3, 5, 2)], lambda g: op("ResizeNearestNeighborGrad", [g, tf.constant(
        [2, 3])], align_corners=False, half_pixel_centers=False)),
    "AdjustContrastv2": Case([(2, 3, 3), ()], lambda x, f: tf.image.adjust_contrast(x, tf.cast(f, tf.float32)),
                             delta=1e-2, tolerance=1e-4),
    "Conv2DBackpropInput": Case([(2, 2, 2, 3), (1, 3, 3, 3)], lambda f, g: tf.nn.conv2d_backprop_input(
        tf.constant([1, 3, 3, 2]), f, g, **CONV)),
    "Conv2DBackpropFilter": Case([(1, 3, 3, 2), (1, 3, 3, 3)], lambda x, g: tf.nn.conv2d_backprop_filter(
        x, tf.constant([2, 2, 2, 3]), g, **CONV)),
    "DepthwiseConv2dNative": Case([(1, 4, 3, 2), (2, 2, 2, 2)], lambda x, f: tf.nn.depthwise_conv2d_native(
        x, f, [1, 2, 1, 1], "SAME")),
    "DepthwiseConv2dNativeBackpropInput": Case([(2, 2, 2, 2), (1, 2, 3, 4)], lambda f, g: (
        tf.nn.depthwise_conv2d_native_backprop_input(tf.constant([1, 4, 3, 2]), f, g, [1, 2, 1, 1], "SAME"))),
    "DepthwiseConv2dNativeBackpropFilter": Case([(1, 4, 3, 2), (1, 2, 3, 4)], lambda x, g: (
        tf.nn.depthwise_conv2d_native_backprop_filter(x, tf.constant([2, 2, 2, 2]), g, [1, 2, 1, 1], "SAME"))),
    "DepthToSpace": Case([(1, 2, 1, 8)], lambda x: tf.depth_to_space(x, 2)),
    "SpaceToDepth": Case([(1, 4, 2, 3)], lambda x: tf.space_to_depth(x, 2)),
    "CTCLoss": Case([(4, 2, 3)], lambda x: tf.nn.ctc_loss(tf.SparseTensor(
        tf.constant([[0, 0], [0, 1], [1, 0]], tf.int64), tf.constant([1, 0, 1]), tf.constant([2, 2], tf.int64)),
        x, [4, 3])),
    "Conv3D": Case([(1, 3, 2, 3, 2), (2, 2, 2, 2, 2)], lambda x, f: tf.nn.conv3d(x, f, [1, 2, 1, 1, 1], "SAME")),
    "Conv3DBackpropInputV2": Case([(2, 2, 2, 2, 2), (1, 2, 2, 3, 2)], lambda f, g: tf.nn.conv3d_transpose(
        g, f, [1, 3, 2, 3, 2], [1, 2, 1, 1, 1], "SAME")),
    "Conv3DBackpropFilterV2": Case([(1, 3, 2, 3, 2), (1, 2, 2, 3, 2)], lambda x, g: tf.nn.conv3d_backprop_filter_v2(
        x, tf.constant([2, 2, 2, 2, 2]), g, [1, 2, 1, 1, 1], "SAME")),
    "MaxPool3D": Case([(1, 3, 3, 2, 2)], lambda x: tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME")),
    "MaxPool3DGrad": Case([(1, 3, 3, 2, 2), (1, 3, 2, 2, 2)], lambda x, g: op(
        "MaxPool3DGrad", [x, tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME"), g], **POOL3D)),
    "MaxPool3DGradGrad": Case([(1, 3, 3, 2, 2), (1, 3, 3, 2, 2)], lambda x, g: op(
        "MaxPool3DGradGrad", [x, tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME"), g], **POOL3D)),
    "AvgPool3D": Case([(1, 3, 3, 2, 2)], lambda x: tf.nn.avg_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME")),
    "AvgPool3DGrad": Case([(1, 3, 2, 2, 2)], lambda g: op("AvgPool3DGrad", [tf.constant([1, 3, 3, 2, 2]), g],
                                                        ksize=[1, 2, 2, 2, 1], strides=[1, 1, 2, 1, 1],
                                                        padding="SAME", data_format="NDHWC")),
    # ---- reductions and scans
    "Sum": Case([(2, 3)], lambda x: [tf.reduce_sum(x, 1), tf.reduce_sum(x)]),
    "Mean": Case([(2, 3)], lambda x: [tf.reduce_mean(x, 0), tf.reduce_mean(x, keepdims=True)]),
    "Max": Case([(2, 3)], lambda x: [tf.reduce_max(x, 1), tf.reduce_max(x)]),
    "Min": Case([(2, 3)], lambda x: [tf.reduce_min(x, 0), tf.reduce_min(x)]),
    "Prod": Case([(2, 3)], lambda x: [tf.reduce_prod(x, 1), tf.reduce_prod(x)]),
    "Cumsum": Case([(2, 3)], lambda x: [tf.cumsum(x, 1), tf.cumsum(x, 1, exclusive=True, reverse=True)]),
    "Cumprod": Case([(2, 3)], lambda x: [tf.cumprod(x, 1), tf.cumprod(x, 1, exclusive=True, reverse=True)]),
    "SegmentSum": Case([(3, 2)], lambda x: tf.segment_sum(x, tf.constant([0, 0, 1]))),
    "UnsortedSegmentSum": Case([(3, 2)], lambda x: tf.unsorted_segment_sum(x, tf.constant([2, 0, 2]), 3)),
    # ---- shapes, copies and rearrangements
    "Identity": Case([(2, 3)], tf.identity),
    "IdentityN": Case([(2, 3), (3,)], lambda a, b: tf.identity_n([a, b])),
    "Snapshot": Case([(2, 3)], lambda x: op("Snapshot", [x])),
    "CheckNumerics": Case([(2, 3)], lambda x: tf.check_numerics(x * x, "squared")),
    "EnsureShape": Case([(2, 3)], lambda x: tf.ensure_shape(x, [2, 3])),
    "PlaceholderWithDefault": Case([(2, 3)], lambda x: tf.placeholder_with_default(x, [2, 3])),
    "Print": Case([(2, 3)], lambda x: tf.Print(x, [], message="")),
    "Reshape": Case([(2, 3)], lambda x: tf.reshape(x, [3, 2])),
    "ExpandDims": Case([(2, 3)], lambda x: tf.expand_dims(x, 1)),
    "Squeeze": Case([(2, 1, 3)], tf.squeeze),
    "Transpose": Case([(2, 3, 2)], lambda x: tf.transpose(x, [2, 0, 1])),
    "BroadcastTo": Case([(3,)], lambda x: tf.broadcast_to(x, [2, 3])),
    "Tile": Case([(2, 3)], lambda x: tf.tile(x, [2, 1])),
    "Fill": Case([()], lambda v: tf.fill([2, 3], v)),
    "Pack": Case([(2, 3), (2, 3)], lambda a, b: tf.stack([a, b], axis=1)),
    "Unpack": Case([(2, 3)], lambda x: tf.unstack(x, axis=1)),
    "Concat": Case([(2, 3), (2, 1)], lambda a, b: op("Concat", [1, [a, b]])),
    "ConcatV2": Case([(2, 3), (2, 1)], lambda a, b: tf.concat([a, b], 1)),
    "Split": Case([(2, 4)], lambda x: tf.split(x, 2, axis=1)),
    "SplitV": Case([(2, 4)], lambda x: tf.split(x, [1, 3], axis=1)),
    "Slice": Case([(3, 4)], lambda x: tf.slice(x, [1, 0], [2, 3])),
    "StridedSlice": Case([(3, 4)], lambda x: x[1:, ::-2]),
    "StridedSliceGrad": Case([(2, 2)], lambda g: op("StridedSliceGrad", [
        tf.constant([3, 4]), tf.constant([1, 0]), tf.constant([3, 4]), tf.constant([1, 2]), g])),
    "Pad": Case([(2, 3)], lambda x: tf.pad(x, [[1, 0], [0, 2]])),
    "PadV2": Case([(2, 3)], lambda x: tf.pad(x, [[1, 0], [0, 2]], constant_values=0.5)),
    "MirrorPad": Case([(2, 3)], lambda x: [tf.pad(x, [[1, 1], [0, 2]], mode="REFLECT"),
                                            tf.pad(x, [[1, 0], [2, 1]], mode="SYMMETRIC")]),
    "MirrorPadGrad": Case([(4, 5)], lambda g: op("MirrorPadGrad", [g, tf.constant([[1, 1], [0, 2]])],
                                                 mode="REFLECT")),
    "ReverseV2": Case([(2, 3)], lambda x: tf.reverse(x, [1])),
    "ReverseSequence": Case([(2, 4)], lambda x: tf.reverse_sequence(x, tf.constant([3, 2], tf.int64), seq_axis=1,
                                                                     batch_axis=0)),
    "Gather": Case([(3, 2)], lambda x: op("Gather", [x, tf.constant([2, 0, 2])])),
    "GatherV2": Case([(3, 2)], lambda x: [tf.gather(x, [2, 0, 2]), tf.gather(x, [1, 1], axis=1)]),
    "GatherNd": Case([(3, 2)], lambda x: tf.gather_nd(x, [[0, 1], [2, 0], [0, 1]])),
    "ScatterNd": Case([(3,)], lambda u: tf.scatter_nd([[1], [3], [1]], u, [4])),
    "DynamicPartition": Case([(4, 2)], lambda x: tf.dynamic_partition(x, tf.constant([1, 0, 1, 1]), 2)),
    "DynamicStitch": Case([(2, 2), (1, 2)], lambda a, b: tf.dynamic_stitch([tf.constant([0, 2]), tf.constant([1])],
                                                                          [a, b])),
    "TopKV2": Case([(2, 4)], lambda x: tf.nn.top_k(x, 2)[0]),
    # ---- variables (the inputs are read from tf.Variables)
    "ReadVariableOp": Case([(2, 3)], lambda v: v.read_value(), kinds=("variable",)),
    "ResourceGather": Case([(3, 2)], lambda v: tf.gather(v, [2, 0, 2]), kinds=("variable",)),
    # ---- TensorArrays
    "TensorArrayWriteV3": Case([(2,), (2,)], lambda a, b: _tensor_array(2).write(0, a).write(1, b * 2.0).stack()),
    "TensorArrayReadV3": Case([(3, 2)], lambda x: [_tensor_array(3).unstack(x).read(2),
                                                   _tensor_array(3).unstack(x).read(0)]),
    "TensorArrayScatterV3": Case([(2, 3)], lambda x: _tensor_array(3).scatter([2, 0], x).gather([0, 2])),
    "TensorArrayGatherV3": Case([(3, 2)], lambda x: _tensor_array(3).unstack(x).gather([1, 2, 0])),
    "TensorArraySplitV3": Case([(5,)], lambda x: _tensor_array(2).split(x, [2, 3]).read(1)),
    "TensorArrayConcatV3": Case([(3, 2)], lambda x: _tensor_array(3).unstack(x).concat()),
}


def _swish(x):
    from tensorweave_example_plugin import swish
    return swish(x)


def _annotate(x):
    from tensorweave_example_plugin import annotate
    return annotate(x * x, note="squared")


CASES["Swish"] = Case([(2, 3)], _swish)
CASES["Annotate"] = Case([(2, 3)], _annotate)


# ---- linear algebra and special functions: matrices made well conditioned (x + 3I, x x^T + 3I), and outputs
# whose signs LAPACK picks (eigenvectors, singular vectors) used only in sign-free forms
def _well_conditioned(x):
    return x + 3.0 * np.eye(x.shape[-1].value)


def _spd(x):
    return tf.matmul(x, x, transpose_b=True) + 3.0 * np.eye(x.shape[-1].value)


def _svd_case(full_matrices):
    def build(x):
        s, u, v = tf.svd(x, full_matrices=full_matrices)
        k = s.shape[-1].value
        return [s, tf.matmul(u[..., :k], v[..., :k], transpose_b=True), u * u, v * v]
    return build


CASES.update({
    "MatrixDiag": Case([(2, 3)], tf.matrix_diag),
    "MatrixDiagPart": Case([(2, 3, 4)], lambda x: [tf.matrix_diag_part(x), tf.matrix_diag_part(x[0, :, :3])]),
    "MatrixSetDiag": Case([(2, 3, 4), (2, 3)], tf.matrix_set_diag),
    "MatrixBandPart": Case([(3, 4)], lambda x: [tf.matrix_band_part(x, 1, 0), tf.matrix_band_part(x, -1, 1)]),
    "MatrixDiagV3": Case([(2, 2, 3)], lambda d: [tf.linalg.diag(d, k=(-1, 0), num_cols=4, padding_value=2.0),
                                                 tf.linalg.diag(d[0, 0], k=1, align="LEFT_LEFT")]),
    "MatrixDiagPartV3": Case([(2, 3, 4)], lambda x: [tf.linalg.diag_part(x, k=(-1, 2), padding_value=3.0),
                                                     tf.linalg.diag_part(tf.reshape(x, [4, 6]), k=-2)]),
    "MatrixSetDiagV3": Case([(2, 3, 4), (2, 2, 3)], lambda x, d: tf.linalg.set_diag(x, d, k=(0, 1),
                                                                                   align="RIGHT_RIGHT")),
    "SpaceToBatchND": Case([(2, 3, 4, 1)], lambda x: tf.space_to_batch_nd(x, [2, 2], [[1, 0], [0, 2]])),
    "BatchToSpaceND": Case([(8, 2, 3, 1)], lambda x: tf.batch_to_space_nd(x, [2, 4], [[1, 0], [2, 1]])),
    "Diag": Case([(2, 2)], tf.diag),
    "DiagPart": Case([(2, 3, 2, 3)], tf.diag_part),
    "Cholesky": Case([(2, 3, 3)], lambda x: tf.cholesky(_spd(x))),
    "MatrixInverse": Case([(3, 3)], lambda x: [tf.matrix_inverse(_well_conditioned(x)),
                                               tf.matrix_inverse(_well_conditioned(x), adjoint=True)]),
    "MatrixDeterminant": Case([(2, 3, 3)], lambda x: tf.matrix_determinant(_well_conditioned(x))),
    "LogMatrixDeterminant": Case([(2, 3, 3)], lambda x: tf.linalg.slogdet(_well_conditioned(x))[1]),
    "MatrixSolve": Case([(3, 3), (3, 2)], lambda a, b: [tf.matrix_solve(_well_conditioned(a), b),
                                                        tf.matrix_solve(_well_conditioned(a), b, adjoint=True)]),
    "MatrixTriangularSolve": Case([(3, 3), (3, 2)], lambda a, b: [
        tf.matrix_triangular_solve(_well_conditioned(a), b),
        tf.matrix_triangular_solve(_well_conditioned(a), b, lower=False, adjoint=True)]),
    "MatrixSolveLs": Case([(4, 3), (4, 2)], lambda a, b: [
        op("MatrixSolveLs", [a, b, tf.constant(0.0, tf.float64)], fast=True),
        op("MatrixSolveLs", [tf.transpose(a), b[:3], tf.constant(0.5, tf.float64)], fast=True)]),
    "Qr": Case([(4, 3)], lambda x: list(tf.qr(x)) + list(tf.qr(tf.transpose(x)[:, :3])) + list(tf.qr(
        tf.transpose(x)))),
    "Svd": Case([(4, 3)], lambda x: _svd_case(False)(x) + _svd_case(False)(tf.transpose(x)) + [
        tf.svd(x, compute_uv=False)] + _svd_case(True)(x[:3])),
    "SelfAdjointEigV2": Case([(3, 3)], lambda x: [tf.self_adjoint_eig(x + tf.transpose(x))[0],
                                                  tf.self_adjoint_eig(x + tf.transpose(x))[1] ** 2,
                                                  tf.self_adjoint_eigvals(x + tf.transpose(x))]),
    "Lgamma": Case([(2, 3)], tf.lgamma, positive=True),
    "Digamma": Case([(2, 3)], tf.digamma, positive=True),
    "Polygamma": Case([(2, 3)], lambda x: tf.polygamma(tf.constant(2.0, tf.float64), x), positive=True),
    "Erf": Case([(2, 3)], tf.erf),
    "Erfc": Case([(2, 3)], tf.erfc),
    "Atan2": Case([(2, 3), (3,)], tf.atan2),
    "MulNoNan": Case([(2, 3), (3,)], tf.math.multiply_no_nan),
    "Igamma": Case([(2, 3), (3,)], tf.math.igamma, positive=True),
    "Igammac": Case([(2, 3), (3,)], tf.math.igammac, positive=True),
    "Zeta": Case([(3,)], lambda q: tf.math.zeta(tf.constant([2.5, 3.0, 4.0], tf.float64), q), positive=True),
    "Betainc": Case([(3,)], lambda x: tf.math.betainc(tf.constant(2.0, tf.float64), tf.constant(3.0, tf.float64),
                                                      x * 0.5), positive=True),
    "Tan": Case([(2, 3)], tf.tan),
    "Asin": Case([(2, 3)], lambda x: tf.asin(x * 0.5)),
    "Acos": Case([(2, 3)], lambda x: tf.acos(x * 0.5)),
    "Atan": Case([(2, 3)], tf.atan),
    "Sinh": Case([(2, 3)], tf.sinh),
    "Cosh": Case([(2, 3)], tf.cosh),
    "Asinh": Case([(2, 3)], tf.asinh),
    "Acosh": Case([(2, 3)], lambda x: tf.acosh(x + 1.0), positive=True),
    "Atanh": Case([(2, 3)], lambda x: tf.atanh(x * 0.5)),
    "BesselI0e": Case([(2, 3)], tf.math.bessel_i0e),
    "BesselI1e": Case([(2, 3)], tf.math.bessel_i1e),
    "Xdivy": Case([(2, 3), (3,)], tf.math.xdivy),
    "Xlogy": Case([(2, 3), (3,)], tf.math.xlogy, positive=True),
    "EuclideanNorm": Case([(2, 3)], lambda x: [tf.math.reduce_euclidean_norm(x, 1),
                                               tf.math.reduce_euclidean_norm(x, 0, keepdims=True)]),
    "CumulativeLogsumexp": Case([(2, 3)], lambda x: [tf.math.cumulative_logsumexp(x, 1),
                                                     tf.math.cumulative_logsumexp(x, 0, reverse=True)]),
    "Roll": Case([(2, 3)], lambda x: tf.roll(x, [1, -2], [0, 1])),
    "TensorScatterUpdate": Case([(3, 2), (2, 2)], lambda t, u: tf.tensor_scatter_nd_update(t, [[0], [2]], u)),
    "TensorScatterAdd": Case([(3, 2), (3, 2)], lambda t, u: tf.tensor_scatter_nd_add(t, [[0], [2], [0]], u)),
    "TensorScatterSub": Case([(3, 2), (2,)], lambda t, u: tf.tensor_scatter_nd_sub(t, [[0, 1], [2, 0]], u)),
    "SegmentMean": Case([(3, 2)], lambda x: tf.segment_mean(x, tf.constant([0, 0, 2]))),
    "SegmentMax": Case([(3, 2)], lambda x: tf.segment_max(x, tf.constant([0, 0, 1]))),
    "SegmentMin": Case([(3, 2)], lambda x: tf.segment_min(x, tf.constant([0, 1, 1]))),
    "SegmentProd": Case([(3, 2)], lambda x: tf.segment_prod(x, tf.constant([0, 0, 1]))),
    "UnsortedSegmentMax": Case([(3, 2)], lambda x: tf.unsorted_segment_max(x, tf.constant([1, 0, 1]), 2)),
    "UnsortedSegmentMin": Case([(3, 2)], lambda x: tf.unsorted_segment_min(x, tf.constant([1, -1, 0]), 2)),
    "UnsortedSegmentProd": Case([(3, 2)], lambda x: tf.unsorted_segment_prod(x, tf.constant([1, 0, 1]), 2)),
})

_MPI = ("a collective over the ranks of an MPI world: it needs tensorweave_distributed.init(), which this "
        "process must not call (tests/distributed checks what happens before it); ")
UNCHECKED = {
    "PreventGradient": "its gradient raises by design: it marks a tensor that must not be differentiated",
    "MpiAllReduce": _MPI + "tests/distributed/scripts/collectives_job.py checks its gradient on several ranks",
    "MpiAllGather": _MPI + "tests/distributed/scripts/collectives_job.py checks its gradient on several ranks",
    "MpiBroadcast": _MPI + "tests/distributed/scripts/collectives_job.py checks its gradient on several ranks",
    "MpiReduceScatter": _MPI + "no test checks its gradient yet",
}

BY_FRAMES = {
    "Switch": "every case's tf.cond frames put the op's inputs through Switch",
    "Merge": "every case's tf.cond and tf.while_loop frames end in a Merge",
    "Enter": "every case's tf.while_loop frame enters the inputs (constant Enter) and the loop variables",
    "Exit": "every case's tf.while_loop frame leaves through Exit",
    "NextIteration": "every case's tf.while_loop frame carries its loop variables through NextIteration",
}

# ---- sparse tensors: the values (and dense operands) are the float inputs; indices and shapes are constants
SP_IDX, SP_SHAPE = [[0, 1], [0, 3], [2, 0], [2, 2]], [3, 4]


def _sp(values, indices=SP_IDX, shape=SP_SHAPE):
    return tf.SparseTensor(indices, values, shape)


def _sparse_matmuls(v, b):
    a = _sp(v)
    return [tf.sparse_tensor_dense_matmul(a, b), tf.sparse_tensor_dense_matmul(a, tf.transpose(b), adjoint_b=True),
            tf.sparse_tensor_dense_matmul(tf.sparse_transpose(a), b * b, adjoint_a=True)]


CASES.update({
    "SparseToDense": Case([(3,), ()], lambda v, d: tf.sparse_to_dense([[0, 1], [1, 0], [2, 2]], [3, 3], v, d)),
    "SparseTensorDenseMatMul": Case([(4,), (4, 2)], _sparse_matmuls),
    "SparseTensorDenseAdd": Case([(4,), (3, 4)], lambda v, d: tf.sparse_add(_sp(v), d)),
    "SparseAdd": Case([(4,), (3,)], lambda a, b: tf.sparse_add(_sp(a), _sp(b, [[0, 1], [1, 1], [2, 2]])).values),
    "SparseReduceSum": Case([(4,)], lambda v: [tf.sparse_reduce_sum(_sp(v), 1),
                                               tf.sparse_reduce_sum(_sp(v), 0, keepdims=True)]),
    "SparseSoftmax": Case([(4,)], lambda v: tf.sparse_softmax(_sp(v)).values),
    "SparseReorder": Case([(3,)], lambda v: tf.sparse_reorder(_sp(v, [[2, 0], [0, 3], [0, 1]])).values),
    "SparseFillEmptyRows": Case([(4,), ()], lambda v, d: tf.sparse_fill_empty_rows(_sp(v), d)[0].values),
    "SparseSlice": Case([(4,)], lambda v: tf.sparse_slice(_sp(v), [0, 1], [3, 2]).values),
    "SparseDenseCwiseMul": Case([(4,), (3, 1)], lambda v, d: [(_sp(v) * d).values, (_sp(v) * d[0]).values]),
    "SparseDenseCwiseDiv": Case([(4,), (4,)], lambda v, d: (_sp(v) / (d * d + 1.0)).values),
})
_SEGMENT_ROWS, _SEGMENT_IDS = [0, 2, 2, 3], [0, 0, 2, 2]
for _kind, _fn in (("Sum", tf.sparse_segment_sum), ("Mean", tf.sparse_segment_mean),
                   ("SqrtN", tf.sparse_segment_sqrt_n)):
    CASES[f"SparseSegment{_kind}"] = Case([(4, 3)], lambda x, fn=_fn: fn(x, _SEGMENT_ROWS, _SEGMENT_IDS))
    CASES[f"SparseSegment{_kind}WithNumSegments"] = Case(
        [(4, 3)], lambda x, fn=_fn: fn(x, _SEGMENT_ROWS, _SEGMENT_IDS, num_segments=4))
UNCHECKED.update({
    "SparseSparseMaximum": "its gradient raises, as TF has none (TF registers one that cannot run)",
    "SparseSparseMinimum": "its gradient raises, as TF has none (TF registers one that cannot run)",
})
