"""Each hand-written CUDA kernel against the CPU kernel of the same op on the same inputs, in float16, float32 and
float64, NHWC and NCHW; duplicate indices, out-of-range ids and labels raise what the CPU raises. These need a
CUDA device and skip without one (with the probe's reason)."""

import types

import numpy as np
import pytest

from tensorweave import dtypes
from tensorweave.extension import errors

from tensorweave_cpu.kernels import conv as cpu_conv
from tensorweave_cpu.kernels import losses as cpu_losses
from tensorweave_cpu.kernels import pooling as cpu_pooling
from tensorweave_cpu.kernels import segments as cpu_segments
from tensorweave_cpu.kernels import state as cpu_state
from tensorweave_cpu.kernels import training as cpu_training
from tensorweave_cuda.kernels import conv, losses, pooling, scatter, training

from conftest import requires_cuda

pytestmark = requires_cuda
FLOATS = (np.float16, np.float32, np.float64)
TOLERANCE = {np.float16: 5e-2, np.float32: 1e-4, np.float64: 1e-10}
RNG = np.random.default_rng(3)


@pytest.fixture(scope="module")
def cp():
    import cupy
    return cupy


def _kernel(module, op_type):
    return next(k for k in module.KERNELS if k.op_type == op_type)


def _run(module, op_type, xp, inputs, **attrs):
    """Builds ``op_type``'s kernel from ``module`` for a node with ``attrs`` on a device whose arrays are ``xp``'s."""
    node = types.SimpleNamespace(attrs=attrs, device=types.SimpleNamespace(array_module=xp), name=op_type,
                                 op_type=op_type)
    return _kernel(module, op_type).build(node)(*inputs)


def _both(cp, cpu_module, gpu_module, op_type, inputs, **attrs):
    """(CPU result, GPU result on the host) of one op on the same inputs."""
    want = _run(cpu_module, op_type, np, inputs, **attrs)
    got = _run(gpu_module, op_type, cp, [cp.asarray(x) if isinstance(x, np.ndarray) else x for x in inputs], **attrs)
    as_list = isinstance(want, (tuple, list))
    return (list(want) if as_list else want), ([cp.asnumpy(g) for g in got] if as_list else cp.asnumpy(got))


def _close(got, want, dtype):
    tol = TOLERANCE[dtype]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


# ---- losses --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("classes", [3, 300, 1000])
def test_fused_softmax_cross_entropies_match_the_cpu(cp, dtype, classes):
    logits = (RNG.standard_normal((7, classes)) * 5).astype(dtype)
    labels = RNG.random((7, classes)).astype(dtype)
    labels /= labels.sum(axis=1, keepdims=True)
    want, got = _both(cp, cpu_losses, losses, "SoftmaxCrossEntropyWithLogits", [logits, labels])
    for g, w in zip(got, want):
        _close(g, w, dtype)
    ids = RNG.integers(0, classes, 7).astype(np.int32)
    want, got = _both(cp, cpu_losses, losses, "SparseSoftmaxCrossEntropyWithLogits", [logits, ids])
    for g, w in zip(got, want):
        _close(g, w, dtype)


def test_a_bad_label_raises_the_cpu_message(cp):
    logits, ids = np.zeros((3, 4), np.float32), np.array([1, 4, -1], np.int64)
    with pytest.raises(ValueError) as cpu:
        _run(cpu_losses, "SparseSoftmaxCrossEntropyWithLogits", np, [logits, ids])
    with pytest.raises(ValueError) as gpu:
        _run(losses, "SparseSoftmaxCrossEntropyWithLogits", cp, [cp.asarray(logits), cp.asarray(ids)])
    assert str(gpu.value) == str(cpu.value)


# ---- scatter-adds ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + (np.int32, np.int64))
def test_unsorted_segment_sum_adds_duplicates_and_drops_negative_ids(cp, dtype):
    data = (RNG.standard_normal((200, 3, 5)) * 4).astype(dtype)
    ids = RNG.integers(-2, 9, 200).astype(np.int32)  # many duplicates
    want, got = _both(cp, cpu_segments, scatter, "UnsortedSegmentSum", [data, ids, np.int64(9)])
    _close(got, want, dtype if dtype in TOLERANCE else np.float64)
    with pytest.raises(ValueError, match=r"segment_ids\[3\] = 9 is out of range \[0, 9\)"):
        _run(scatter, "UnsortedSegmentSum", cp, [cp.asarray(data[:5]), cp.asarray(np.array([0, 1, 2, 9, 9])),
                                                 np.int64(9)])


def _var(value, dtype, name="v"):
    var = cpu_state.Var(name, dtypes.as_dtype(dtype))
    var.value = value
    return types.SimpleNamespace(resource=var, name=name), var


@pytest.mark.parametrize("dtype", FLOATS)
def test_resource_scatter_add_with_atomics_matches_the_cpu(cp, dtype):
    start = RNG.standard_normal((10, 4)).astype(dtype)
    indices = np.array([1, 3, 1, 1, 9, 0], np.int64)
    updates = RNG.standard_normal((6, 4)).astype(dtype)
    cpu_handle, cpu_var = _var(start.copy(), dtype)
    gpu_handle, gpu_var = _var(cp.asarray(start), dtype)
    kind = dtypes.as_dtype(dtype)
    _run(cpu_state, "ResourceScatterAdd", np, [cpu_handle, indices, updates], dtype=kind)
    _run(scatter, "ResourceScatterAdd", cp, [gpu_handle, cp.asarray(indices), cp.asarray(updates)], dtype=kind)
    _close(cp.asnumpy(gpu_var.value), cpu_var.value, dtype)
    before = cp.asnumpy(gpu_var.value)
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 10 is not in \[0, 10\)"):
        _run(scatter, "ResourceScatterAdd", cp, [gpu_handle, cp.asarray(np.array([2, 10])),
                                                 cp.asarray(updates[:2])], dtype=kind)
    assert (cp.asnumpy(gpu_var.value) == before).all()  # checked before anything changed


# ---- pooling and convolution -----------------------------------------------------------------------------------------
WINDOWS = [((2, 9, 8, 3), (2, 2), (2, 2), "VALID"), ((1, 7, 5, 4), (3, 3), (2, 1), "SAME"),
           ((2, 6, 6, 2), (3, 2), (1, 1), "SAME")]


def _attr(pair, data_format):
    return [1, 1, *pair] if data_format == "NCHW" else [1, *pair, 1]


def _layout(x, data_format):
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if data_format == "NCHW" else x


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", WINDOWS)
def test_pooling_and_its_gradients_match_the_cpu(cp, dtype, data_format, case):
    shape, window, strides, padding = case
    x = _layout(RNG.standard_normal(shape).astype(dtype), data_format)
    attrs = dict(ksize=_attr(window, data_format), strides=_attr(strides, data_format), padding=padding,
                 data_format=data_format)
    for op_type in ("MaxPool", "AvgPool"):
        want, got = _both(cp, cpu_pooling, pooling, op_type, [x], **attrs)
        _close(got, want, dtype)
    out = _run(cpu_pooling, "MaxPool", np, [x], **attrs)
    grad = RNG.standard_normal(out.shape).astype(dtype)
    want, got = _both(cp, cpu_pooling, pooling, "MaxPoolGrad", [x, out, grad], **attrs)
    _close(got, want, dtype)
    want, got = _both(cp, cpu_pooling, pooling, "AvgPoolGrad", [np.array(x.shape, np.int32), grad], **attrs)
    _close(got, want, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_max_pooling_with_explicit_padding_matches_the_cpu(cp, dtype, data_format):
    x = _layout(RNG.standard_normal((2, 7, 6, 3)).astype(dtype), data_format)
    spatial = [2, 0, 1, 2]
    attrs = dict(ksize=_attr((3, 3), data_format), strides=_attr((2, 1), data_format), padding="EXPLICIT",
                 explicit_paddings=[0, 0, *spatial, 0, 0] if data_format == "NHWC" else [0, 0, 0, 0, *spatial],
                 data_format=data_format)
    want, got = _both(cp, cpu_pooling, pooling, "MaxPool", [x], **attrs)
    _close(got, want, dtype)
    grad = RNG.standard_normal(want.shape).astype(dtype)
    want, got = _both(cp, cpu_pooling, pooling, "MaxPoolGrad", [x, want, grad], **attrs)
    _close(got, want, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("padding", ["SAME", ((3, 0), (1, 2))], ids=["SAME", "explicit"])
def test_convolution_and_its_gradients_match_the_cpu(cp, dtype, data_format, dilation, padding):
    x = _layout(RNG.standard_normal((2, 9, 8, 3)).astype(dtype), data_format)
    w = (RNG.standard_normal((3, 2, 3, 5)) / 3).astype(dtype)
    attrs = dict(strides=_attr((2, 1), data_format), padding=padding, data_format=data_format,
                 dilations=_attr((dilation, dilation), data_format))
    if padding != "SAME":
        spatial = [*padding[0], *padding[1]]
        attrs.update(padding="EXPLICIT", explicit_paddings=[0, 0, *spatial, 0, 0] if data_format == "NHWC"
                     else [0, 0, 0, 0, *spatial])
    want, got = _both(cp, cpu_conv, conv, "Conv2D", [x, w], **attrs)
    _close(got, want, dtype)
    dy = RNG.standard_normal(want.shape).astype(dtype)
    want, got = _both(cp, cpu_conv, conv, "Conv2DBackpropInput", [np.array(x.shape, np.int32), w, dy], **attrs)
    _close(got, want, dtype)
    want, got = _both(cp, cpu_conv, conv, "Conv2DBackpropFilter", [x, np.array(w.shape, np.int32), dy], **attrs)
    _close(got, want, dtype)


# ---- optimizer updates -------------------------------------------------------------------------------------------------
SCALARS = {"alpha": 0.1, "lr": 0.05, "momentum": 0.9, "beta1_power": 0.81, "beta2_power": 0.998, "beta1": 0.9,
           "beta2": 0.999, "epsilon": 1e-3, "rho": 0.9, "l1": 0.05, "l2": 0.1, "l2_shrinkage": 0.07, "lr_power": -0.5,
           "global_step": 3}


def _apply(module, xp, optimizer, sparse, dtype, slots, grad, indices, options):
    names = cpu_training.sparse_inputs(cpu_training.UPDATES[optimizer][0]) if sparse else \
        cpu_training.UPDATES[optimizer][0]
    handles, inputs = [], []
    for name in names:
        if name in cpu_training.SLOTS:
            handle, var = _var(xp.asarray(slots[name]).copy(), dtype, name)
            handles.append(var)
            inputs.append(handle)
        elif name in ("grad", "delta"):
            inputs.append(xp.asarray(grad))
        elif name == "indices":
            inputs.append(xp.asarray(indices))
        else:
            inputs.append(xp.asarray(np.asarray(SCALARS[name], np.int64 if name == "global_step" else dtype)))
    op_type = f"Resource{'Sparse' if sparse else ''}Apply{optimizer}"
    _run(module, op_type, xp, inputs, T=dtypes.as_dtype(dtype), use_locking=True, **options)
    return [np.asarray(v.value.get() if hasattr(v.value, "get") else v.value) for v in handles]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("optimizer,options", [
    ("GradientDescent", {}), ("Momentum", {"use_nesterov": False}), ("Momentum", {"use_nesterov": True}),
    ("Adagrad", {"update_slots": True}), ("Adagrad", {"update_slots": False}), ("Adam", {}), ("RMSProp", {}),
    ("CenteredRMSProp", {}), ("Adadelta", {}), ("Ftrl", {}), ("FtrlV2", {}), ("ProximalAdagrad", {}),
    ("ProximalGradientDescent", {}), ("AdagradDA", {})])
def test_fused_optimizer_updates_match_the_cpu(cp, dtype, sparse, optimizer, options):
    slots = {name: (RNG.random((6, 3)) + 0.5).astype(dtype) for name in cpu_training.SLOTS}
    slots["mg"] = (slots["mg"] * 0.1).astype(dtype)  # keeps centered RMSProp's ms - mg^2 positive
    indices = np.array([4, 0, 4, 2], np.int32)  # a duplicate row: its gradients are summed first
    grad = RNG.standard_normal((4, 3) if sparse else (6, 3)).astype(dtype)
    want = _apply(cpu_training, np, optimizer, sparse, dtype, slots, grad, indices, options)
    got = _apply(training, cp, optimizer, sparse, dtype, slots, grad, indices, options)
    for g, w in zip(got, want):
        _close(g, w, dtype)
