"""The native (C++) CPU kernels against their numpy twins: same inputs through both kernels, equal values.

Both kernels are built from their registrations with the same attrs, so the twin is the very kernel the
registry falls back to. The optimizer updates must agree bit for bit (same formulas, same rounding).
"""

import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.extension import ResourceHandle
from tensorweave.plugins import get_registries

from tensorweave_cpu.kernels import native
from tensorweave_cpu.kernels.state import Var
from tensorweave_cpu.plugin import KERNEL_MODULES

needs_native = pytest.mark.skipif(native.native is None, reason=native.STATUS)
RNG = np.random.default_rng(7)
FLOATS = [np.float32, np.float64]


@pytest.mark.skipif(os.environ.get("TENSORWEAVE_CPU_NATIVE", "1") == "0", reason="turned off by TENSORWEAVE_CPU_NATIVE")
def test_the_extension_is_built_and_loaded():
    assert native.native is not None, native.STATUS
    assert native.STATUS.startswith("native kernels on")


def _node(op_type, attrs):
    dtype = attrs.get("T", attrs.get("dtype"))
    return SimpleNamespace(op_type=op_type, name=op_type, attrs=attrs, input_dtypes=[dtype] * 4,
                           device=SimpleNamespace(array_module=np))


def _kernels(op_type, **attrs):
    """(native compute, numpy twin compute) for ``op_type`` with ``attrs``."""
    import importlib
    twins = [k for name in KERNEL_MODULES if name != native.__name__
             for k in importlib.import_module(name).KERNELS if k.op_type == op_type and k.matches(attrs)]
    mine = [k for k in native.KERNELS if k.op_type == op_type and k.matches(attrs)]
    assert len(twins) == 1 and len(mine) == 1, (op_type, twins, mine)
    return mine[0].build(_node(op_type, attrs)), twins[0].build(_node(op_type, attrs))


def _close(got, want, dtype):
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(1.0, float(np.abs(w).max(initial=0))))


@needs_native
@pytest.mark.parametrize("op_type,attrs", [
    ("Conv2D", {}), ("Conv2DBackpropInput", {}), ("Conv2DBackpropFilter", {}), ("MaxPool", {}), ("MaxPoolGrad", {}),
    ("AvgPool", {}), ("AvgPoolGrad", {}), ("Relu", {}), ("ReluGrad", {}), ("Relu6Grad", {}),
    ("Sigmoid", {}), ("SigmoidGrad", {}), ("TanhGrad", {}),
    ("SoftmaxCrossEntropyWithLogits", {}),
    ("SparseSoftmaxCrossEntropyWithLogits", {}), ("BiasAdd", {}), ("BiasAddGrad", {}),
    ("ResourceScatterAdd", {"dtype": tf.float32}), ("ResourceApplyAdam", {}), ("ResourceSparseApplyMomentum", {})])
def test_the_registry_picks_native_for_float32_and_float64_and_numpy_otherwise(op_type, attrs):
    registries = get_registries()
    type_attr = "dtype" if "dtype" in attrs else "T"
    for dtype in (tf.float32, tf.float64):
        assert registries.kernels.find(op_type, "CPU", {**attrs, type_attr: dtype}).label == "native"
    assert registries.kernels.find(op_type, "CPU", {**attrs, type_attr: tf.float16}).label == ""


# ---- convolution -------------------------------------------------------------------------------------------
CONV_CASES = [  # input NHWC, filter, strides, padding, dilations
    ((2, 9, 9, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 9, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", (1, 1)),
    ((1, 5, 5, 2), (4, 4, 2, 3), (1, 1), "SAME", (1, 1)),
    ((2, 9, 7, 2), (3, 2, 2, 5), (2, 3), "VALID", (1, 1)),
    ((1, 9, 9, 2), (3, 3, 2, 2), (1, 1), "SAME", (2, 2)),
    ((3, 5, 5, 4), (1, 1, 4, 6), (1, 1), "VALID", (1, 1)),
    ((4, 12, 12, 1), (5, 5, 1, 8), (1, 1), "SAME", (1, 1)),
]


def _layout(shape4, data_format):
    return shape4 if data_format == "NHWC" else (shape4[0], shape4[3], shape4[1], shape4[2])


def _hw(pair, data_format):
    return [1, *pair, 1] if data_format == "NHWC" else [1, 1, *pair]


@needs_native
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("x_shape,f_shape,strides,padding,dilations", CONV_CASES)
def test_conv2d_and_both_backprops_match_numpy(x_shape, f_shape, strides, padding, dilations, data_format, dtype):
    attrs = dict(T=tf.as_dtype(dtype), strides=_hw(strides, data_format), padding=padding, data_format=data_format,
                 dilations=_hw(dilations, data_format))
    x = RNG.standard_normal(_layout(x_shape, data_format)).astype(dtype)
    f = RNG.standard_normal(f_shape).astype(dtype)
    mine, twin = _kernels("Conv2D", **attrs)
    y = twin(x, f)
    _close(mine(x, f), y, dtype)
    dy = RNG.standard_normal(y.shape).astype(dtype)
    mine, twin = _kernels("Conv2DBackpropInput", **attrs)
    sizes = np.array(x.shape, np.int32)
    _close(mine(sizes, f, dy), twin(sizes, f, dy), dtype)
    mine, twin = _kernels("Conv2DBackpropFilter", **attrs)
    sizes = np.array(f.shape, np.int32)
    _close(mine(x, sizes, dy), twin(x, sizes, dy), dtype)


@needs_native
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("x_shape,f_shape,strides,pads,dilations", [
    ((2, 7, 6, 3), (3, 2, 3, 4), (1, 1), ((2, 1), (0, 3)), (1, 1)),
    ((1, 9, 8, 2), (3, 3, 2, 2), (2, 3), ((0, 4), (1, 0)), (2, 1)),
    ((1, 2, 2, 1), (1, 1, 1, 2), (1, 1), ((4, 4), (0, 5)), (1, 1)),
])
def test_conv2d_with_explicit_padding_matches_numpy(x_shape, f_shape, strides, pads, dilations, data_format):
    (top, bottom), (left, right) = pads
    spatial = [top, bottom, left, right]
    explicit = [0, 0, *spatial, 0, 0] if data_format == "NHWC" else [0, 0, 0, 0, *spatial]
    attrs = dict(T=tf.float64, strides=_hw(strides, data_format), padding="EXPLICIT", explicit_paddings=explicit,
                 data_format=data_format, dilations=_hw(dilations, data_format))
    x = RNG.standard_normal(_layout(x_shape, data_format))
    f = RNG.standard_normal(f_shape)
    mine, twin = _kernels("Conv2D", **attrs)
    y = twin(x, f)
    _close(mine(x, f), y, np.float64)
    dy = RNG.standard_normal(y.shape)
    mine, twin = _kernels("Conv2DBackpropInput", **attrs)
    _close(mine(np.array(x.shape, np.int32), f, dy), twin(np.array(x.shape, np.int32), f, dy), np.float64)
    mine, twin = _kernels("Conv2DBackpropFilter", **attrs)
    _close(mine(x, np.array(f.shape, np.int32), dy), twin(x, np.array(f.shape, np.int32), dy), np.float64)


@needs_native
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_max_pool_with_explicit_padding_matches_numpy(data_format):
    spatial = [2, 0, 1, 2]
    attrs = dict(T=tf.float64, ksize=_hw((3, 3), data_format), strides=_hw((2, 1), data_format),
                 padding="EXPLICIT", explicit_paddings=[0, 0, *spatial, 0, 0] if data_format == "NHWC"
                 else [0, 0, 0, 0, *spatial], data_format=data_format)
    x = RNG.standard_normal(_layout((2, 7, 6, 3), data_format))
    mine, twin = _kernels("MaxPool", **attrs)
    y = twin(x)
    _close(mine(x), y, np.float64)
    grad = RNG.standard_normal(y.shape)
    mine, twin = _kernels("MaxPoolGrad", **attrs)
    _close(mine(x, y, grad), twin(x, y, grad), np.float64)


@needs_native
def test_conv2d_reports_a_depth_mismatch_as_the_numpy_kernel_does():
    mine, twin = _kernels("Conv2D", T=tf.float32, strides=[1] * 4, padding="SAME", data_format="NHWC",
                          dilations=[1] * 4)
    x, f = np.zeros((1, 4, 4, 3), np.float32), np.zeros((3, 3, 2, 1), np.float32)
    with pytest.raises(ValueError, match="does not match the filter's in_channels"):
        mine(x, f)


# ---- pooling -----------------------------------------------------------------------------------------------
POOL_CASES = [((2, 8, 8, 3), (2, 2), (2, 2), "VALID"), ((2, 7, 9, 4), (3, 3), (2, 2), "SAME"),
              ((1, 6, 5, 2), (3, 2), (1, 1), "SAME"), ((3, 9, 9, 2), (3, 3), (3, 2), "VALID")]


@needs_native
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("x_shape,ksize,strides,padding", POOL_CASES)
def test_pooling_and_gradients_match_numpy(x_shape, ksize, strides, padding, data_format, dtype):
    attrs = dict(T=tf.as_dtype(dtype), ksize=_hw(ksize, data_format), strides=_hw(strides, data_format),
                 padding=padding, data_format=data_format)
    x = (np.round(RNG.standard_normal(_layout(x_shape, data_format)) * 2) / 2).astype(dtype)  # many ties
    mine, twin = _kernels("MaxPool", **attrs)
    out = twin(x)
    np.testing.assert_array_equal(mine(x), out)
    grad = RNG.standard_normal(out.shape).astype(dtype)
    mine, twin = _kernels("MaxPoolGrad", **attrs)
    _close(mine(x, out, grad), twin(x, out, grad), dtype)
    mine, twin = _kernels("AvgPool", **attrs)
    _close(mine(x), twin(x), dtype)
    mine, twin = _kernels("AvgPoolGrad", **attrs)
    sizes = np.array(x.shape, np.int32)
    _close(mine(sizes, grad), twin(sizes, grad), dtype)


@needs_native
def test_max_pool_grad_routes_each_window_to_its_first_maximum():
    mine, _ = _kernels("MaxPoolGrad", T=tf.float32, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID",
                       data_format="NHWC")
    x = np.array([[3, 3], [1, 3]], np.float32).reshape(1, 2, 2, 1)
    dx = mine(x, np.full((1, 1, 1, 1), 3, np.float32), np.full((1, 1, 1, 1), 5, np.float32))
    np.testing.assert_array_equal(dx.reshape(2, 2), [[5, 0], [0, 0]])


# ---- activations ---------------------------------------------------------------------------------------------
@needs_native
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op_type", ["Relu", "Relu6"])
def test_relu_relu6_and_gradients_match_numpy_with_nan_and_edges(op_type, dtype):
    x = (RNG.standard_normal((7, 33)) * 5).astype(dtype)
    x[0, :5] = [np.nan, 0, 6, -0.0, np.inf]
    dy = RNG.standard_normal(x.shape).astype(dtype)
    dy[1, 0] = np.nan
    mine, twin = _kernels(op_type, T=tf.as_dtype(dtype))
    np.testing.assert_array_equal(mine(x), twin(x))
    mine, twin = _kernels(f"{op_type}Grad", T=tf.as_dtype(dtype))
    np.testing.assert_array_equal(mine(dy, x), twin(dy, x))
    np.testing.assert_array_equal(mine(dy.T, x.T), twin(dy.T, x.T))  # non-contiguous inputs


@needs_native
@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_and_the_output_gradients_match_numpy(dtype):
    x = (RNG.standard_normal((9, 40)) * 30).astype(dtype)
    x[0, :4] = [np.nan, np.inf, -np.inf, 0]
    mine, twin = _kernels("Sigmoid", T=tf.as_dtype(dtype))
    with np.errstate(all="ignore"):
        y = twin(x)
        np.testing.assert_allclose(mine(x), y, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-44)
        np.testing.assert_allclose(mine(x.T), twin(x.T), rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-44)
    dy = RNG.standard_normal(y.shape).astype(dtype)
    for op_type, out in (("SigmoidGrad", y), ("TanhGrad", np.tanh(x))):
        mine, twin = _kernels(op_type, T=tf.as_dtype(dtype))
        np.testing.assert_array_equal(mine(out, dy), twin(out, dy))


# ---- out=: the memory plan's buffers, dying inputs written over in place --------------------------------------------
@needs_native
@pytest.mark.parametrize("dtype", FLOATS)
def test_elementwise_kernels_write_into_out_or_over_a_dying_input(dtype):
    x = RNG.standard_normal((6, 5, 4, 8)).astype(dtype)
    dy = RNG.standard_normal(x.shape).astype(dtype)
    y = 1 / (1 + np.exp(-x))
    cases = [("Relu", {}, (x,)), ("Relu6", {}, (x * 4,)), ("Sigmoid", {}, (x,)), ("ReluGrad", {}, (dy, x)),
             ("Relu6Grad", {}, (dy, x * 4)), ("SigmoidGrad", {}, (y, dy)), ("TanhGrad", {}, (np.tanh(x), dy)),
             ("BiasAdd", {"data_format": "NHWC"}, (x, dy[0, 0, 0])), ("BiasAdd", {"data_format": "NCHW"}, (x, dy[0, :, 0, 0]))]
    for op_type, attrs, inputs in cases:
        mine, twin = _kernels(op_type, T=tf.as_dtype(dtype), **attrs)
        assert mine.accepts_out
        want = mine(*inputs)
        _close(want, twin(*inputs), dtype)
        for k in range(len(inputs)):  # over each input of the result's shape, in place
            if inputs[k].shape != want.shape:
                continue
            args = [a.copy() for a in inputs]
            got = mine(*args, out=args[k])
            assert got is args[k]
            np.testing.assert_array_equal(got, want)
        buffer = np.empty_like(want)
        assert mine(*inputs, out=buffer) is buffer
        np.testing.assert_array_equal(buffer, want)
        for unfit in (np.empty(want.shape, np.float16), np.empty(want.size, dtype)):  # ignored, not an error
            got = mine(*inputs, out=unfit)
            assert got is not unfit
            np.testing.assert_array_equal(got, want)


@needs_native
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_conv2d_writes_its_nhwc_result_into_out(data_format):
    attrs = dict(T=tf.float64, strides=[1] * 4, padding="SAME", data_format=data_format, dilations=[1] * 4)
    x, f = RNG.standard_normal(_layout((2, 6, 6, 3), data_format)), RNG.standard_normal((3, 3, 3, 4))
    mine, twin = _kernels("Conv2D", **attrs)
    want = twin(x, f)
    buffer = np.empty(want.shape)
    got = mine(x, f, out=buffer)
    assert (got is buffer) == (data_format == "NHWC")
    _close(got, want, np.float64)


# ---- fused softmax cross-entropies -------------------------------------------------------------------------
@needs_native
@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_cross_entropies_match_numpy(dtype):
    logits = (RNG.standard_normal((33, 10)) * 20).astype(dtype)
    labels = RNG.dirichlet(np.ones(10), size=33).astype(dtype)
    mine, twin = _kernels("SoftmaxCrossEntropyWithLogits", T=tf.as_dtype(dtype))
    _close(mine(logits, labels), twin(logits, labels), dtype)
    for index_type in (np.int32, np.int64):
        ids = RNG.integers(0, 10, 33).astype(index_type)
        mine, twin = _kernels("SparseSoftmaxCrossEntropyWithLogits", T=tf.as_dtype(dtype),
                              Tlabels=tf.as_dtype(index_type))
        _close(mine(logits, ids), twin(logits, ids), dtype)


@needs_native
def test_sparse_softmax_cross_entropy_refuses_labels_out_of_range_with_the_numpy_message():
    mine, twin = _kernels("SparseSoftmaxCrossEntropyWithLogits", T=tf.float32, Tlabels=tf.int32)
    logits, ids = np.zeros((3, 4), np.float32), np.array([0, 4, 1], np.int32)
    with pytest.raises(ValueError) as want:
        twin(logits, ids)
    with pytest.raises(ValueError) as got:
        mine(logits, ids)
    assert str(got.value) == str(want.value)


# ---- bias-add with activation --------------------------------------------------------------------------------
@needs_native
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,data_format", [((64, 256), "NHWC"), ((4, 5, 6, 7), "NHWC"), ((4, 5, 6, 7), "NCHW"),
                                               ((3, 8, 2), "NCHW")])
def test_bias_add_and_its_gradient_match_numpy(shape, data_format, dtype):
    value = RNG.standard_normal(shape).astype(dtype)
    bias = RNG.standard_normal(shape[1] if data_format == "NCHW" else shape[-1]).astype(dtype)
    mine, twin = _kernels("BiasAdd", T=tf.as_dtype(dtype), data_format=data_format)
    _close(mine(value, bias), twin(value, bias), dtype)
    mine, twin = _kernels("BiasAddGrad", T=tf.as_dtype(dtype), data_format=data_format)
    _close(mine(value), twin(value), dtype)


@needs_native
def test_bias_add_fuses_relu_and_relu6_keeping_nan():
    value = np.array([[-2.0, 0.5, 7.0], [np.nan, -0.1, 3.0]], np.float32)
    bias = np.array([1.0, -1.0, 0.0], np.float32)
    plain = value + bias
    np.testing.assert_array_equal(native.bias_add_activation(value, bias, activation="relu"), np.maximum(plain, 0))
    np.testing.assert_array_equal(native.bias_add_activation(value, bias, activation="relu6"), np.clip(plain, 0, 6))
    with pytest.raises(ValueError, match="unknown activation"):
        native.bias_add_activation(value, bias, activation="gelu")


# ---- in-place updates: scatter-add and the fused optimizers --------------------------------------------------------
def _handle(array):
    var = Var("v", tf.as_dtype(array.dtype))
    var.value = array.copy()
    return ResourceHandle("/cpu:0", "", "v", var)


@needs_native
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_scatter_add_matches_numpy_with_repeated_rows(index_type):
    table = RNG.standard_normal((50, 8))
    ids = np.array([[3, 7], [3, 49]], index_type)
    updates = RNG.standard_normal((2, 2, 8))
    attrs = dict(dtype=tf.float64, Tindices=tf.as_dtype(index_type))
    mine, twin = _kernels("ResourceScatterAdd", **attrs)
    a, b = _handle(table), _handle(table)
    mine(a, ids, updates)
    twin(b, ids, updates)
    np.testing.assert_array_equal(a.resource.value, b.resource.value)
    mine(a, ids, np.float64(2.0))
    twin(b, ids, np.float64(2.0))
    np.testing.assert_array_equal(a.resource.value, b.resource.value)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 50 is not in \[0, 50\)"):
        mine(a, np.array([1, 50], index_type), np.zeros((2, 8)))


OPTIMIZERS = {  # slot count, hyperparameters in the op's input order (around grad), attrs
    "GradientDescent": (0, [0.1], [], {}),
    "Momentum": (1, [0.1], [0.9], {"use_nesterov": False}),
    "Nesterov": (1, [0.1], [0.9], {"use_nesterov": True}),
    "Adagrad": (1, [0.1], [], {"update_slots": True}),
    "Adam": (2, [0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-7], [], {}),
    "RMSProp": (2, [0.01, 0.9, 0.5, 1e-6], [], {}),
    "CenteredRMSProp": (3, [0.01, 0.9, 0.5, 1e-6], [], {}),
}


@needs_native
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_updates_match_numpy_bit_for_bit(name, dtype, sparse):
    slots, before, after, options = OPTIMIZERS[name]
    optimizer = "Momentum" if name == "Nesterov" else name
    op_type = f"Resource{'Sparse' if sparse else ''}Apply{optimizer}"
    attrs = dict(T=tf.as_dtype(dtype), use_locking=False, Tindices=tf.int64, **options)
    mine, twin = _kernels(op_type, **attrs)
    shape = (20, 6)
    state = [RNG.standard_normal(shape).astype(dtype)] + [RNG.uniform(0.1, 1, shape).astype(dtype)
                                                          for _ in range(slots)]
    if name == "CenteredRMSProp":
        state[2] += 1  # ms above mg squared, so the square root stays real
    ids = np.array([4, 0, 4, 19, 7, 0, 4], np.int64)
    grad = RNG.standard_normal((len(ids), 6) if sparse else shape).astype(dtype)
    scalars = [np.asarray(v, dtype) for v in before]
    tail = [np.asarray(v, dtype) for v in after]
    handles = {}
    for which, kernel in (("mine", mine), ("twin", twin)):
        handles[which] = [_handle(s) for s in state]
        inputs = [*handles[which], *scalars, grad, *([ids] if sparse else []), *tail]
        for _ in range(3):
            kernel(*inputs)
    for a, b in zip(handles["mine"], handles["twin"]):
        assert np.isfinite(a.resource.value).all()
        np.testing.assert_array_equal(a.resource.value, b.resource.value)
    assert not np.array_equal(handles["mine"][0].resource.value, state[0])
    if sparse and name != "Adam":
        untouched = np.setdiff1d(np.arange(20), ids)
        np.testing.assert_array_equal(handles["mine"][0].resource.value[untouched], state[0][untouched])


@needs_native
def test_an_update_copies_a_variable_a_reader_still_holds():
    mine, _ = _kernels("ResourceApplyGradientDescent", T=tf.float32, use_locking=True)
    handle = _handle(np.ones(4, np.float32))
    read = handle.resource.value
    mine(handle, np.float32(0.5), np.ones(4, np.float32))
    np.testing.assert_array_equal(read, np.ones(4))
    np.testing.assert_array_equal(handle.resource.value, np.full(4, 0.5))


@needs_native
def test_sparse_update_refuses_ids_out_of_range():
    mine, _ = _kernels("ResourceSparseApplyGradientDescent", T=tf.float32, use_locking=False, Tindices=tf.int32)
    handle = _handle(np.ones((3, 2), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = -1 is not in \[0, 3\)"):
        mine(handle, np.float32(0.5), np.ones((1, 2), np.float32), np.array([-1], np.int32))


@needs_native
def test_kernels_split_across_threads_give_the_same_values():
    """Forced onto several threads (at this size they run on one), the kernels still match numpy."""
    before = native.native.parallel_work(1)
    try:
        test_conv2d_and_both_backprops_match_numpy(*CONV_CASES[0], "NHWC", np.float32)
        test_pooling_and_gradients_match_numpy(*POOL_CASES[1], "NCHW", np.float64)
        test_bias_add_and_its_gradient_match_numpy((64, 256), "NHWC", np.float32)
        test_bias_add_and_its_gradient_match_numpy((4, 5, 6, 7), "NCHW", np.float64)
        test_sigmoid_and_the_output_gradients_match_numpy(np.float32)
        test_softmax_cross_entropies_match_numpy(np.float64)
        for name in ("Adam", "CenteredRMSProp", "Nesterov"):
            for sparse in (False, True):
                test_optimizer_updates_match_numpy_bit_for_bit(name, np.float32, sparse)
    finally:
        native.native.parallel_work(before)


# ---- a whole training step through the graph, and the numpy fallback -----------------------------------------------
_STEP = """
import numpy as np, tensorweave as tf
rng = np.random.default_rng(0)
x = tf.constant(rng.standard_normal((4, 8, 8, 2)).astype(np.float32))
labels = tf.constant(np.array([0, 1, 2, 1], np.int32))
w = tf.get_variable("w", initializer=rng.standard_normal((3, 3, 2, 4)).astype(np.float32))
b = tf.get_variable("b", initializer=np.zeros(4, np.float32))
h = tf.nn.max_pool(tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b)), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
dense = tf.get_variable("d", initializer=rng.standard_normal((64, 3)).astype(np.float32) * 0.1)
logits = tf.matmul(tf.reshape(h, [4, 64]), dense)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
train = tf.train.AdamOptimizer(0.01).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train)
    print(repr(sess.run(loss).item()), repr(sess.run(w).sum().item()))
"""


def _run_step(native_on):
    env = dict(os.environ, TENSORWEAVE_CPU_NATIVE="1" if native_on else "0")
    out = subprocess.run([sys.executable, "-c", _STEP], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return [float(v) for v in out.stdout.split()]


@needs_native
def test_a_training_step_gives_the_same_numbers_with_and_without_native_kernels():
    with_native, numpy_only = _run_step(True), _run_step(False)
    np.testing.assert_allclose(with_native, numpy_only, rtol=1e-5)


def test_the_plugin_listing_says_when_native_kernels_are_off_and_why():
    env = dict(os.environ, TENSORWEAVE_CPU_NATIVE="0")
    out = subprocess.run([sys.executable, "-m", "tensorweave.cli", "plugins", "--verbose"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "note: native kernels off: disabled by TENSORWEAVE_CPU_NATIVE" in out.stdout
    assert "Conv2D@CPU[native]" not in out.stdout and "Conv2D@CPU" in out.stdout
