"""Native (C++, pybind11) CPU kernels for the hot ops, registered one priority above their numpy twins.

``tensorweave_cpu._native`` is built by the package's own build (scikit-build-core, OpenMP when found).
float32 convolutions run on oneDNN's direct kernels and float32 MatMuls on its GEMM when the extension was built
with it (``onednn-cpu-gomp``, a dependency: its library is loaded here before the extension), other convolutions
as a native im2col/col2im around one numpy GEMM (BLAS beats hand loops there); pooling, relu, relu6 and
sigmoid and their gradients (and tanh's), the fused cross-entropies, bias-add, scatter-add and the optimizer
updates run wholly in C++ with the GIL released. Only float32 and float64 are native;
other dtypes keep their numpy kernels. When the extension is missing or fails to import, or
``TENSORWEAVE_CPU_NATIVE=0``, KERNELS is empty, the numpy kernels serve every op, and STATUS says why
(``tensorweave plugins`` shows it).
"""

import ctypes
import importlib.metadata
import os

import numpy as np

from tensorweave.extension import KernelSet, bias_channel_axis, errors

from tensorweave_cpu.kernels.conv import check_out_backprop, conv_windows
from tensorweave_cpu.kernels.pooling import check_grad, pool_windows
from tensorweave_cpu.kernels.sliding_windows import from_nhwc, nhwc_shape, to_nhwc
from tensorweave_cpu.kernels.state import check_indices, owned_value, variable_of
from tensorweave_cpu.kernels.training import check_update_shapes, locked, update_attrs, update_inputs


def _load_onednn():
    """Loads oneDNN's library from its wheel (installed beside the package, not on the loader's path), so that an
    extension built against it finds it; the extension's import says what is missing if this finds nothing."""
    try:
        dist = importlib.metadata.distribution("onednn-cpu-gomp")
    except importlib.metadata.PackageNotFoundError:
        return
    for f in dist.files or ():
        if f.name == "libdnnl.so.3":
            try:
                ctypes.CDLL(str(dist.locate_file(f)), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                pass
            return


def _load():
    if os.environ.get("TENSORWEAVE_CPU_NATIVE", "1").strip().lower() in ("0", "false", "off", "no"):
        return None, "native kernels off: disabled by TENSORWEAVE_CPU_NATIVE"
    # OpenMP threads that spin while idle starve numpy's BLAS threads on the same cores (GEMMs and updates
    # ran 10-60x slower on 2 cores): unless the user chose, they sleep. libgomp reads this once, when it
    # loads, so it is set only around the import. A libgomp loaded earlier (PyTorch bundles one under the
    # same name) keeps its own setting.
    chosen = "OMP_WAIT_POLICY" in os.environ
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        _load_onednn()
        from tensorweave_cpu import _native
    except ImportError as e:
        return None, (f"native kernels off: the C++ extension tensorweave_cpu._native did not import ({e}); "
                      f"reinstall tensorweave-kernels-cpu with a C++ compiler to build it")
    finally:
        if not chosen:
            del os.environ["OMP_WAIT_POLICY"]
    threads = f"OpenMP, {_native.threads()} threads" if _native.openmp else "no OpenMP, 1 thread"
    convolutions = (f"oneDNN {_native.onednn} convolutions and float32 GEMM" if _native.onednn
                    else "im2col convolutions")
    return _native, f"native kernels on ({threads}, {convolutions})"


native, STATUS = _load()
KERNELS = KernelSet("CPU", priority=1)
LABEL = "native"
_FLOATS = ["float32", "float64"]


def _register(op_type, accepts_out=False, **kwargs):
    """Registers a compute function only when the extension loaded (a no-op decorator otherwise).

    With ``accepts_out`` the executor's memory planning may pass ``out=``: a C-contiguous, writeable buffer
    nobody else holds (possibly a dying input), used when it fits the result.
    """
    def decorator(fn):
        if native is not None:
            kernel = KERNELS.add(op_type, fn, dtypes=kwargs.pop("dtypes", _FLOATS), label=LABEL, **kwargs)
            if accepts_out:
                kernel.build = _taking_out(kernel.build)
        return fn
    return decorator


def _taking_out(build):
    def build_taking_out(node):
        compute = build(node)
        compute.accepts_out = True
        return compute
    return build_taking_out


def _fits(out, shape, dtype):
    return out is not None and out.shape == shape and out.dtype == dtype


def _c(a, dtype=None):
    """``a`` as a C-contiguous array, copied only if needed (0-d arrays stay 0-d)."""
    a = np.asarray(a, dtype)
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _geometry(w):
    """The 14 integers of a Windows that the C++ kernels take."""
    n, h, width, c = w.in_shape
    return (n, h, width, c, *w.window, *w.strides, *w.dilations, w.pad_top, w.pad_left, w.out_h, w.out_w)


# ---- convolution: oneDNN for float32, else native im2col/col2im around one GEMM --------------------------------------
def _columns(x, windows):
    """The [N*out_h*out_w, kh*kw*C] window matrix (the input itself for an unpadded 1x1 stride-1 filter)."""
    if windows.window == (1, 1) and windows.strides == (1, 1) and not windows.is_padded and x.flags.c_contiguous:
        return x.reshape(-1, x.shape[3])
    return native.im2col(x, _geometry(windows))


def _on_onednn(*arrays):
    return native.onednn is not None and all(a.dtype == np.float32 for a in arrays)


@_register("Conv2D", accepts_out=True)
def conv2d(x, w, *, strides, padding, data_format, dilations, explicit_paddings=(), out=None):
    x = to_nhwc(x, data_format)
    windows = conv_windows(x.shape, w.shape, strides, dilations, padding, data_format, explicit_paddings)
    out_channels = w.shape[3]
    shape = windows.out_shape[:3] + (out_channels,)
    into = out if data_format == "NHWC" else None
    if _on_onednn(x, w):
        y = native.conv2d_onednn(_c(x), _c(w), None, _geometry(windows), False, into)
        if y is not None:
            return from_nhwc(y, data_format)
    columns, w2 = _columns(x, windows), w.reshape(-1, out_channels)
    if into is not None and _fits(into, shape, columns.dtype):
        np.matmul(columns, w2, out=into.reshape(-1, out_channels))
        return into
    return from_nhwc((columns @ w2).reshape(shape), data_format)


@_register("Conv2DBackpropInput")
def conv2d_backprop_input(input_sizes, w, dy, *, strides, padding, data_format, dilations, explicit_paddings=()):
    in_shape = nhwc_shape(input_sizes, data_format)
    dy = to_nhwc(dy, data_format)
    windows = conv_windows(in_shape, w.shape, strides, dilations, padding, data_format, explicit_paddings)
    out_channels = w.shape[3]
    check_out_backprop(dy, windows, out_channels)
    if _on_onednn(w, dy):
        dx = native.conv2d_backprop_input_onednn(_c(w), _c(dy), _geometry(windows))
        if dx is not None:
            return from_nhwc(dx, data_format)
    d_columns = dy.reshape(-1, out_channels) @ w.reshape(-1, out_channels).T
    return from_nhwc(native.col2im(d_columns, _geometry(windows)), data_format)


@_register("Conv2DBackpropFilter")
def conv2d_backprop_filter(x, filter_sizes, dy, *, strides, padding, data_format, dilations, explicit_paddings=()):
    filter_shape = tuple(int(d) for d in filter_sizes)
    x, dy = to_nhwc(x, data_format), to_nhwc(dy, data_format)
    windows = conv_windows(x.shape, filter_shape, strides, dilations, padding, data_format, explicit_paddings)
    check_out_backprop(dy, windows, filter_shape[3])
    if _on_onednn(x, dy):
        d_filter = native.conv2d_backprop_filter_onednn(_c(x), _c(dy), _geometry(windows), filter_shape[3])
        if d_filter is not None:
            return d_filter
    d_filter = _columns(x, windows).T @ dy.reshape(-1, filter_shape[3])
    return d_filter.reshape(filter_shape)


# ---- MatMul: oneDNN's GEMM for float32 ------------------------------------------------------------------------------
# OpenBLAS's threads spin after each call and fight oneDNN's and the native kernels' OpenMP threads for the cores
# (the LeNet step took 1.5x as long with both pools); on oneDNN a mid-sized float32 GEMM shares the one OpenMP pool.
# Outside [ONEDNN_GEMM_MIN, ONEDNN_GEMM_MAX) multiply-adds numpy's call wins: below, oneDNN wakes its sleeping
# threads for a product OpenBLAS finishes in microseconds (an LSTM's [64, 34] x [34, 128]: 25 us against 7); above,
# OpenBLAS's kernel is faster by more than the threads' fight costs (the MLP's [512, 784] x [784, 256]: 0.76 ms
# against 1.26; between the two they were level, alone, e.g. 0.14-0.22 ms for the LeNet dense layer's products).
ONEDNN_GEMM_MIN, ONEDNN_GEMM_MAX = 1 << 20, 1 << 24


def _gemm_operand(x):
    return x if x.flags.c_contiguous or x.flags.f_contiguous else np.ascontiguousarray(x)


if native is not None and native.onednn is not None:
    @_register("MatMul", dtypes=["float32"])
    def matmul(a, b, *, transpose_a, transpose_b):
        if (a.ndim == 2 and b.ndim == 2 and ONEDNN_GEMM_MIN <= a.size * b.shape[1 - transpose_b] < ONEDNN_GEMM_MAX
                and a.shape[1 - transpose_a] == b.shape[transpose_b]):
            return native.matmul_onednn(_gemm_operand(a), _gemm_operand(b), transpose_a, transpose_b)
        return np.dot(a.T if transpose_a else a, b.T if transpose_b else b)  # small, large, empty, numpy's error


# ---- pooling -------------------------------------------------------------------------------------------------------
@_register("MaxPool")
def max_pool(x, *, ksize, strides, padding, data_format, explicit_paddings=()):
    x = to_nhwc(x, data_format)
    windows = pool_windows(x.shape, ksize, strides, padding, data_format, explicit_paddings)
    return from_nhwc(native.max_pool(x, _geometry(windows)), data_format)


@_register("MaxPoolGrad")
def max_pool_grad(x, out, grad, *, ksize, strides, padding, data_format, explicit_paddings=()):
    x, out, grad = (to_nhwc(t, data_format) for t in (x, out, grad))
    windows = pool_windows(x.shape, ksize, strides, padding, data_format, explicit_paddings)
    check_grad(grad, windows)
    check_grad(out, windows)
    return from_nhwc(native.max_pool_grad(_c(x), _c(out), _c(grad), _geometry(windows)), data_format)


@_register("AvgPool")
def avg_pool(x, *, ksize, strides, padding, data_format):
    x = to_nhwc(x, data_format)
    windows = pool_windows(x.shape, ksize, strides, padding, data_format)
    return from_nhwc(native.avg_pool(x, _geometry(windows)), data_format)


@_register("AvgPoolGrad")
def avg_pool_grad(orig_input_shape, grad, *, ksize, strides, padding, data_format):
    grad = to_nhwc(grad, data_format)
    windows = pool_windows(nhwc_shape(orig_input_shape, data_format), ksize, strides, padding, data_format)
    check_grad(grad, windows)
    return from_nhwc(native.avg_pool_grad(grad, _geometry(windows)), data_format)


# ---- activations, fused softmax cross-entropies and bias-add ---------------------------------------------------------
@_register("Relu", accepts_out=True)
def relu(x, out=None):
    return native.relu(_c(x), out)


@_register("ReluGrad", accepts_out=True)
def relu_grad(dy, x, out=None):
    return native.relu_grad(_c(dy), _c(x), out)


@_register("Relu6", accepts_out=True)
def relu6(x, out=None):
    return native.relu6(_c(x), out)


@_register("Relu6Grad", accepts_out=True)
def relu6_grad(dy, x, out=None):
    return native.relu6_grad(_c(dy), _c(x), out)


@_register("Sigmoid", accepts_out=True)
def sigmoid(x, out=None):
    return native.sigmoid(_c(x), out)


@_register("SigmoidGrad", accepts_out=True)
def sigmoid_grad(y, dy, out=None):
    return native.sigmoid_grad(_c(y), _c(dy), out)


@_register("TanhGrad", accepts_out=True)
def tanh_grad(y, dy, out=None):
    return native.tanh_grad(_c(y), _c(dy), out)



@_register("SoftmaxCrossEntropyWithLogits")
def softmax_xent(logits, labels):
    if logits.shape != labels.shape or logits.ndim != 2:
        raise ValueError(f"logits and labels must be 2-D and the same shape: logits {list(logits.shape)} vs "
                         f"labels {list(labels.shape)}")
    return native.softmax_xent(_c(logits), _c(labels))


@_register("SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_xent(logits, labels):
    if logits.ndim != 2 or labels.ndim != 1 or labels.shape[0] != logits.shape[0]:
        raise ValueError(f"logits must be 2-D and labels 1-D with the same first dimension: logits "
                         f"{list(logits.shape)} vs labels {list(labels.shape)}")
    return native.sparse_softmax_xent(_c(logits), _c(labels))


def _channel_axis(value, data_format):
    if value.ndim < 2:
        raise ValueError(f"BiasAdd needs a value of rank 2 or more, got shape {list(value.shape)}")
    return bias_channel_axis(value.ndim, data_format)


def bias_add_activation(value, bias, data_format="NHWC", activation="none", out=None):
    """activation(value + bias) in one pass; activation is none, relu or relu6; into ``out`` when it fits."""
    axis = _channel_axis(value, data_format)
    if bias.ndim != 1 or bias.shape[0] != value.shape[axis]:
        raise ValueError(f"bias of shape {list(bias.shape)} must be 1-D with as many elements as value's channel "
                         f"dimension {axis} (value shape {list(value.shape)}, data_format {data_format})")
    return native.bias_add(_c(value), _c(bias), axis, activation, out)


@_register("BiasAdd", accepts_out=True)
def bias_add(value, bias, *, data_format, out=None):
    return bias_add_activation(value, bias, data_format, out=out)


@_register("BiasAddGrad")
def bias_add_grad(dy, *, data_format):
    return native.bias_add_grad(_c(dy), _channel_axis(dy, data_format))


# ---- scatter-add and the fused optimizer updates, in place ---------------------------------------------------------
def _index_error(e):
    return errors.InvalidArgumentError(None, None, str(e))


@_register("ResourceScatterAdd", dtypes={"dtype": _FLOATS})
def scatter_add(handle, indices, updates, *, dtype):
    var = variable_of(handle, dtype)
    with var.lock:
        current = owned_value(var)
        if current.ndim == 0:
            raise errors.InvalidArgumentError(None, None, f"cannot scatter into scalar variable {var.name!r}")
        if np.ndim(updates) and np.shape(updates) != indices.shape + current.shape[1:]:
            raise errors.InvalidArgumentError(None, None, (
                f"scatter into variable {var.name!r} of shape {list(current.shape)}: updates have shape "
                f"{list(np.shape(updates))}, expected {list(indices.shape + current.shape[1:])} or a scalar"))
        try:
            native.scatter_add(current, _c(indices), _c(updates, current.dtype),
                               f"scatter into variable {var.name!r}")
        except IndexError as e:
            raise _index_error(e) from None


_UPDATE_FUNCTIONS = {"GradientDescent": "apply_gradient_descent", "Momentum": "apply_momentum",
                     "Adagrad": "apply_adagrad", "Adam": "apply_adam", "RMSProp": "apply_rms_prop",
                     "CenteredRMSProp": "apply_centered_rms_prop"}


def _update_kernel(optimizer, sparse):
    """build(node) for Resource[Sparse]Apply<optimizer>: locks and copy-on-write as the numpy kernel, then C++."""
    handles, grad_at = update_inputs(optimizer, sparse)
    n_handles = len(handles)
    update = getattr(native, _UPDATE_FUNCTIONS[optimizer])

    def build(node):
        dtype, locking, options = update_attrs(node)

        def compute(*inputs):
            variables = [variable_of(h, dtype) for h in inputs[:n_handles]]
            rest = list(inputs[n_handles:])
            kwargs = dict(options)
            if sparse:
                kwargs["indices"] = _c(rest.pop(grad_at + 1)).reshape(-1)
            grad = _c(rest[grad_at])
            args = [grad if i == grad_at else float(v) for i, v in enumerate(rest)]
            with locked(variables, locking):
                arrays = [owned_value(v) for v in variables]
                check_update_shapes(handles, arrays, grad, sparse)
                if sparse:
                    check_indices(kwargs["indices"], arrays[0].shape[0], "sparse optimizer update")
                try:
                    update(*arrays, *args, **kwargs)
                except IndexError as e:
                    raise _index_error(e) from None
        return compute
    return build


if native is not None:
    for _optimizer in _UPDATE_FUNCTIONS:  # the others run on the numpy kernels
        for _sparse in (False, True):
            KERNELS.add(f"Resource{'Sparse' if _sparse else ''}Apply{_optimizer}", build=_update_kernel(_optimizer, _sparse),
                        dtypes=_FLOATS, label=LABEL)
