"""The host side of the hand-written CUDA kernels, run here against numpy and the CPU kernels: geometry and
strides, the argument blocks the kernels get (their index math replayed in Python on flat buffers), the checks
and their messages, launch configurations, and NCCL's wire plans."""

import itertools
import types

import numpy as np
import pytest

from tensorweave_cpu.kernels import conv as cpu_conv
from tensorweave_cpu.kernels import losses as cpu_losses
from tensorweave_cpu.kernels import pooling as cpu_pooling
from tensorweave_cpu.kernels import segments as cpu_segments
from tensorweave_cpu.kernels import training as cpu_training
from tensorweave_cpu.kernels.sliding_windows import nhwc_shape
from tensorweave_cpu.kernels.state import check_indices, check_scatter
from tensorweave_cuda import nccl
from tensorweave_cuda.kernels import compile as cc
from tensorweave_cuda.kernels import conv, losses, pooling, scatter, training
from tensorweave_cuda.kernels.windows import from_nhwc_shape, nhwc_strides, strides_args, window_args

RNG = np.random.default_rng(7)
CASES = [((2, 5, 6, 3), (2, 2), (2, 2), (1, 1), "VALID"), ((1, 7, 5, 2), (3, 3), (2, 1), (1, 1), "SAME"),
         ((2, 6, 6, 2), (3, 2), (1, 2), (2, 1), "SAME"), ((1, 4, 4, 1), (4, 4), (3, 3), (1, 1), "SAME")]


def _attr(pair, data_format):
    return [1, 1, *pair] if data_format == "NCHW" else [1, *pair, 1]


def _in_format(x_nhwc, data_format):
    return np.ascontiguousarray(x_nhwc.transpose(0, 3, 1, 2)) if data_format == "NCHW" else x_nhwc


# ---- the kernels' loops, replayed on flat buffers with the exact arguments the host code passes ---------------
def _flat(array):
    """The array's memory as a flat array starting at its first element: what the kernel's pointer sees."""
    base = array
    while base.base is not None and isinstance(base.base, np.ndarray):
        base = base.base
    offset = (array.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // array.itemsize
    return base.reshape(-1)[offset:]


def _replay_pool(kind, x, data_format, geo, out_shape):
    n, h, w, c, oh, ow, kh, kw, sh, sw, _, _, pt, pl = (int(v) for v in window_args(geo))
    x0, x1, x2, x3 = (int(v) for v in strides_args(x, data_format))
    y = np.zeros(from_nhwc_shape(out_shape, data_format), dtype=x.dtype)
    y0, y1, y2, y3 = (int(v) for v in strides_args(y, data_format))
    xf, yf = _flat(x), y.reshape(-1)
    for i in range(n * oh * ow * c):
        ch, ox, oy, b = i % c, (i // c) % ow, (i // (c * ow)) % oh, i // (c * ow * oh)
        cells = [xf[b * x0 + r * x1 + q * x2 + ch * x3] for r in range(oy * sh - pt, oy * sh - pt + kh)
                 for q in range(ox * sw - pl, ox * sw - pl + kw) if 0 <= r < h and 0 <= q < w]
        if kind == "max":
            value = max(cells)
        else:
            rows = min(oy * sh - pt + kh, h) - max(oy * sh - pt, 0)
            cols = min(ox * sw - pl + kw, w) - max(ox * sw - pl, 0)
            value = sum(cells) / (rows * cols)
        yf[b * y0 + oy * y1 + ox * y2 + ch * y3] = value
    return y


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling_arguments_index_the_cpu_kernels_windows(case, data_format, kind):
    shape, window, strides, _, padding = case
    x = _in_format(RNG.standard_normal(shape), data_format)
    attrs = dict(ksize=_attr(window, data_format), strides=_attr(strides, data_format), padding=padding,
                 data_format=data_format)
    geo = cpu_pooling.pool_windows(nhwc_shape(x.shape, data_format), **{
        k: attrs[k] for k in ("ksize", "strides", "padding", "data_format")})
    want = (cpu_pooling._max_pool if kind == "max" else cpu_pooling._avg_pool)(x, xp=np, **attrs)
    got = _replay_pool(kind, x, data_format, geo, geo.out_shape)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def _replay_avg_pool_grad(grad, data_format, geo):
    n, h, w, c, oh, ow, kh, kw, sh, sw, _, _, pt, pl = (int(v) for v in window_args(geo))
    g0, g1, g2, g3 = (int(v) for v in strides_args(grad, data_format))
    dx = np.zeros(from_nhwc_shape(geo.in_shape, data_format), grad.dtype)
    d0, d1, d2, d3 = (int(v) for v in strides_args(dx, data_format))
    gf, df = _flat(grad), dx.reshape(-1)

    def count(o, s, p, k, size):
        start = o * s - p
        return min(start + k, size) - max(start, 0)

    for i in range(n * h * w * c):
        ch, col, row, b = i % c, (i // c) % w, (i // (c * w)) % h, i // (c * w * h)
        oy_lo = -(-(row + pt - kh + 1) // sh) if row + pt - kh + 1 > 0 else 0
        oy_hi = min((row + pt) // sh, oh - 1)
        ox_lo = -(-(col + pl - kw + 1) // sw) if col + pl - kw + 1 > 0 else 0
        ox_hi = min((col + pl) // sw, ow - 1)
        df[b * d0 + row * d1 + col * d2 + ch * d3] = sum(
            gf[b * g0 + oy * g1 + ox * g2 + ch * g3] / (count(oy, sh, pt, kh, h) * count(ox, sw, pl, kw, w))
            for oy in range(oy_lo, oy_hi + 1) for ox in range(ox_lo, ox_hi + 1))
    return dx


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_avg_pool_grad_gathers_what_the_cpu_kernel_scatters(case, data_format):
    shape, window, strides, _, padding = case
    in_shape = from_nhwc_shape(shape, data_format)
    attrs = dict(ksize=_attr(window, data_format), strides=_attr(strides, data_format), padding=padding,
                 data_format=data_format)
    geo = cpu_pooling.pool_windows(shape, **attrs)
    grad = _in_format(RNG.standard_normal(geo.out_shape), data_format)
    want = cpu_pooling._avg_pool_grad(np.array(in_shape), grad, xp=np, **attrs)
    np.testing.assert_allclose(_replay_avg_pool_grad(grad, data_format, geo), want, rtol=1e-12, atol=1e-15)


def _replay_im2col(x, data_format, geo):
    n, h, w, c, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl = (int(v) for v in window_args(geo))
    x0, x1, x2, x3 = (int(v) for v in strides_args(x, data_format))
    width, xf = kh * kw * c, _flat(x)
    cols = np.empty(n * oh * ow * width, x.dtype)
    for i in range(cols.size):
        k, r = i % width, i // width
        ch, q, p = k % c, (k // c) % kw, k // (c * kw)
        ox, oy, b = r % ow, (r // ow) % oh, r // (ow * oh)
        row, col = oy * sh - pt + p * dh, ox * sw - pl + q * dw
        cols[i] = xf[b * x0 + row * x1 + col * x2 + ch * x3] if 0 <= row < h and 0 <= col < w else 0
    return cols.reshape(n * oh * ow, width)


def _replay_col2im(cols, data_format, geo):
    n, h, w, c, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl = (int(v) for v in window_args(geo))
    dx = np.zeros(from_nhwc_shape(geo.in_shape, data_format), cols.dtype)
    d0, d1, d2, d3 = (int(v) for v in strides_args(dx, data_format))
    width, cf, df = kh * kw * c, cols.reshape(-1), dx.reshape(-1)
    for i in range(n * h * w * c):
        ch, col, row, b = i % c, (i // c) % w, (i // (c * w)) % h, i // (c * w * h)
        total = 0.0
        for p, q in itertools.product(range(kh), range(kw)):
            y, xx = row + pt - p * dh, col + pl - q * dw
            if y < 0 or y % sh or y // sh >= oh or xx < 0 or xx % sw or xx // sw >= ow:
                continue
            total += cf[((b * oh + y // sh) * ow + xx // sw) * width + (p * kw + q) * c + ch]
        df[b * d0 + row * d1 + col * d2 + ch * d3] = total
    return dx


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_conv_im2col_and_col2im_arguments_reproduce_the_cpu_convolutions(case, data_format):
    shape, window, strides, dilations, padding = case
    x = _in_format(RNG.standard_normal(shape), data_format)
    w = RNG.standard_normal(window + (shape[3], 4))
    attrs = dict(strides=_attr(strides, data_format), padding=padding, data_format=data_format,
                 dilations=_attr(dilations, data_format))
    geo = cpu_conv.conv_windows(shape, w.shape, attrs["strides"], attrs["dilations"], padding, data_format)
    out = _replay_im2col(x, data_format, geo) @ w.reshape(-1, 4)
    out = out.reshape(geo.out_shape[:3] + (4,))
    want = cpu_conv._conv2d(x, w, xp=np, **attrs)
    np.testing.assert_allclose(out.transpose(0, 3, 1, 2) if data_format == "NCHW" else out, want, rtol=1e-10)
    dy = RNG.standard_normal(geo.out_shape[:3] + (4,))
    dy_in_format = _in_format(dy, data_format)
    dx = _replay_col2im(dy.reshape(-1, 4) @ w.reshape(-1, 4).T, data_format, geo)
    want_dx = cpu_conv._conv2d_backprop_input(np.array(from_nhwc_shape(shape, data_format)), w, dy_in_format,
                                              xp=np, **attrs)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-10, atol=1e-12)


def test_sparse_updates_sum_repeated_rows_as_the_cpu_kernel_through_the_scatter_kernels_arguments(monkeypatch):
    calls = []

    def replay(out, values, ids, rows, inner, scalar_values=False):  # scatter_add's loop on flat buffers
        flat_out, flat_values = out.reshape(-1), np.ascontiguousarray(values).reshape(-1)
        for i in range(rows * inner):
            flat_out[ids[i // inner] * inner + i % inner] += flat_values[i]
        calls.append((rows, inner))

    monkeypatch.setattr(training, "scatter_add_into", replay)
    indices, grad = np.array([[3, 1], [3, 0]]), RNG.standard_normal((4, 2, 3))
    rows, summed = cpu_training.summed_rows(indices, grad, (5, 2, 3), np, check_indices, training.add_rows)
    want_rows, want = cpu_training.summed_rows(indices, grad, (5, 2, 3))
    assert rows.tolist() == want_rows.tolist() == [0, 1, 3] and calls == [(4, 6)]
    np.testing.assert_allclose(summed, want, rtol=1e-12)
    np.testing.assert_allclose(summed[2], grad[0] + grad[2], rtol=1e-12)


# ---- layouts and strides ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_nhwc_strides_address_every_element_of_either_layout(data_format):
    x_nhwc = RNG.standard_normal((2, 3, 4, 5))
    x = _in_format(x_nhwc, data_format)
    s = nhwc_strides(x, data_format)
    flat = x.reshape(-1)
    for n, h, w, c in itertools.product(*(range(d) for d in x_nhwc.shape)):
        assert flat[n * s[0] + h * s[1] + w * s[2] + c * s[3]] == x_nhwc[n, h, w, c]
    view = x_nhwc.transpose(0, 3, 1, 2)  # an NCHW view of NHWC memory: read in place, no copy
    assert nhwc_strides(view, "NCHW") == nhwc_strides(x_nhwc, "NHWC")
    assert nhwc_shape(np.array(from_nhwc_shape((2, 3, 4, 5), data_format)), data_format) == (2, 3, 4, 5)


@pytest.mark.parametrize("case", CASES)
def test_window_args_are_the_cpu_windows_in_the_kernels_order(case):
    shape, window, strides, dilations, padding = case
    windows = cpu_conv.Windows(shape, window, strides, dilations, padding)
    args = window_args(windows)
    assert all(type(v) is np.int64 for v in args)
    assert [int(v) for v in args] == [*shape, windows.out_h, windows.out_w, *window, *strides, *dilations,
                                      windows.pad_top, windows.pad_left]


# ---- checks and messages, the same as the CPU kernels' -----------------------------------------------------------
def _message(fn, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return type(info.value), str(info.value)


def test_loss_checks_say_what_the_cpu_kernels_say():
    logits = np.zeros((3, 4), np.float32)
    assert _message(losses.check_dense, (3, 4), (3, 5)) == _message(
        cpu_losses._softmax_xent, logits, np.zeros((3, 5), np.float32), xp=np)
    assert _message(losses.check_sparse, (3, 4), (2,)) == _message(
        cpu_losses._sparse_softmax_xent, logits, np.zeros(2, np.int32), xp=np)
    labels = np.array([1, 0, 4] + [0] * 30, np.int64)
    want = _message(cpu_losses._sparse_softmax_xent, np.zeros((33, 4), np.float32), labels, xp=np)
    error = losses.bad_label_error(labels, 2, 4)
    assert (type(error), str(error)) == want and str(error).endswith(" ...")


def test_segment_sum_layout_and_errors_match_the_cpu_kernel():
    data = RNG.standard_normal((4, 2, 3))
    ids = np.array([[0, 2], [1, -1], [2, 2], [0, 1]])
    rows, inner, out_shape = scatter.segment_layout(data.shape, ids.shape[:1], 3)
    assert (rows, inner, out_shape) == (4, 6, (3, 2, 3))
    rows, inner, out_shape = scatter.segment_layout(data.shape, ids.shape, 3)
    assert (rows, inner, out_shape) == (8, 3, (3, 3))
    # the kernel's loop, replayed: element i of data goes to row ids[i // inner] (negative ids dropped)
    out = np.zeros(out_shape)
    flat_ids, values = ids.reshape(-1), data.reshape(-1)
    for i in range(rows * inner):
        if flat_ids[i // inner] >= 0:
            out.reshape(-1)[flat_ids[i // inner] * inner + i % inner] += values[i]
    np.testing.assert_allclose(out, cpu_segments._unsorted_segment_sum(data, ids, np.int64(3)), rtol=1e-12)
    assert _message(scatter.segment_layout, data.shape, (3,), 3) == _message(
        cpu_segments._unsorted_segment_sum, data, np.zeros(3, np.int64), np.int64(3))
    assert _message(scatter.segment_layout, data.shape, (4,), -1)[1] == "num_segments must be non-negative, got -1"


def test_scatter_checks_the_gpu_kernels_share_name_the_variable():
    v, s, ids = types.SimpleNamespace(name="v"), types.SimpleNamespace(name="s"), np.array([0, 4])
    assert check_scatter(v, (5, 3), ids, (2, 3)) is False
    assert check_scatter(v, (5, 3), ids, ()) is True
    kind, message = _message(check_scatter, v, (5, 3), ids, (2, 4))
    assert kind.__name__ == "InvalidArgumentError"
    assert message == "scatter into variable 'v' of shape [5, 3]: updates have shape [2, 4], expected [2, 3] or a scalar"
    assert _message(check_scatter, s, (), ids, ())[1] == "cannot scatter into scalar variable 's'"
    message = _message(check_scatter, v, (4, 3), ids, (2, 3))[1]
    assert message == "scatter into variable 'v': indices[1] = 4 is not in [0, 4)"


def test_conv_and_pool_kernels_refuse_with_the_cpu_kernels_messages():
    x = np.zeros((1, 5, 5, 3))
    conv_attrs = dict(strides=[1, 1, 1, 1], dilations=[1, 1, 1, 1], data_format="NHWC", xp=np)
    w = np.zeros((2, 2, 4, 1))
    got = _message(conv._conv2d, x, w, padding="VALID", **conv_attrs)
    assert got == _message(cpu_conv._conv2d, x, w, padding="VALID", **conv_attrs)
    assert got[1].startswith("input depth 3 does not match the filter's in_channels 4")
    args = (x, np.array([3, 3, 3, 2]), np.zeros((1, 4, 5, 2)))
    got = _message(conv._conv2d_backprop_filter, *args, padding="SAME", **conv_attrs)
    assert got == _message(cpu_conv._conv2d_backprop_filter, *args, padding="SAME", **conv_attrs)
    assert got[1].startswith("out_backprop has shape [1, 4, 5, 2]")
    pool_attrs = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID", data_format="NHWC", xp=np)
    args = (x, np.zeros((1, 2, 2, 3)), np.zeros((1, 3, 3, 3)))
    got = _message(pooling._max_pool_grad, *args, **pool_attrs)
    assert got == _message(cpu_pooling._max_pool_grad, *args, **pool_attrs)
    assert got[1] == "grad has shape [1, 3, 3, 3] (NHWC order), but pooling gives [1, 2, 2, 3]"
    pool_attrs["ksize"] = [2, 2, 2, 1]
    got = _message(pooling._forward("max_pool"), x, **pool_attrs)
    assert got == _message(cpu_pooling._max_pool, x, **pool_attrs)
    assert "ksize in the batch and channel dimensions must be 1" in got[1]


# ---- launch configuration and per-dtype sources --------------------------------------------------------------------
def test_grids_cover_every_item_without_idle_blocks():
    assert cc.blocks(1) == 1 and cc.blocks(0) == 1
    assert cc.blocks(256) == 1 and cc.blocks(257) == 2
    assert cc.blocks(10 ** 12) == cc.MAX_BLOCKS  # the grid-stride loop does the rest
    assert [cc.row_threads(n) for n in (1, 32, 33, 100, 256, 10 ** 6)] == [32, 32, 64, 128, 256, 256]


def test_sources_are_specialized_per_dtype_and_refuse_others():
    assert "typedef unsigned short scalar_t;" in cc.source("", "float16") and "typedef float acc_t;" in cc.source(
        "", "float16")
    assert "typedef double scalar_t;" in cc.source("", np.float64)
    assert "typedef int index_t;" in cc.source("", "float32", "int32")
    assert cc.acc_dtype("float16") == np.float32 and cc.acc_dtype("float64") == np.float64
    with pytest.raises(TypeError, match="no CUDA kernel source for dtype complex64"):
        cc.source("", "complex64")
    with pytest.raises(TypeError, match="indices must be int32 or int64, got int16"):
        cc.source("", "float32", "int16")


# ---- NCCL's wire plans follow the MPI path's reductions ----------------------------------------------------------
def test_nccl_wire_plans():
    plan = nccl.wire_plan("float32", "allreduce", "mean")
    assert (plan.wire.name, plan.nccl_type, plan.reduction, plan.view) == ("float32", "FLOAT32", "SUM", False)
    plan = nccl.wire_plan("float64", "allreduce", "sum", "float16")
    assert (plan.wire.name, plan.nccl_type, plan.view, plan.scale) == ("float16", "FLOAT16", False, 1)
    plan = nccl.wire_plan("bool", "allreduce", "min")
    assert (plan.wire.name, plan.reduction, plan.view, plan.scale) == ("uint8", "MIN", True, 1)
    assert nccl.wire_plan("bool", "allreduce", "sum").reduction == "MAX"
    plan = nccl.wire_plan("complex128", "allreduce", "sum")
    assert (plan.wire.name, plan.scale) == ("float64", 2)
    assert nccl.wire_plan("complex64", "allreduce", "max") is None
    assert nccl.wire_plan("int16", "allreduce", "sum") is None  # NCCL has no int16: MPI carries it
    assert nccl.wire_plan("float32", "allreduce", "sum", "bfloat16") is None
    plan = nccl.wire_plan("int16", "allgather")
    assert (plan.wire.name, plan.view, plan.scale) == ("uint8", True, 2)  # gathers move bytes


def test_nccl_gather_padding_is_the_most_rows_of_any_rank():
    assert nccl.padded_rows([2, 5, 0]) == 5 and nccl.padded_rows([]) == 0


def test_backend_refuses_host_arrays_and_what_nccl_cannot_reduce():
    class FakeCupy:
        class ndarray:
            def __init__(self, dtype, device=0):
                self.dtype, self.device = np.dtype(dtype), types.SimpleNamespace(id=device)

    backend = nccl.NcclCollectives.__new__(nccl.NcclCollectives)
    backend.cupy, backend.nccl, backend.cuda_device = FakeCupy, object(), types.SimpleNamespace(id=0)
    assert not backend.supports("allreduce", [FakeCupy.ndarray("float32", device=1)], "sum")  # another GPU's
    assert backend.supports("allreduce", [FakeCupy.ndarray("float32")], "sum")
    assert not backend.supports("allreduce", [np.zeros(2, np.float32)], "sum")
    assert not backend.supports("allreduce", [FakeCupy.ndarray("int16")], "sum")
    assert backend.supports("broadcast", [FakeCupy.ndarray("int16")])
    backend.nccl = None  # the library did not load
    assert not backend.supports("allreduce", [FakeCupy.ndarray("float32")], "sum")
