"""CPU kernels for reductions, ArgMax/ArgMin, Cumsum/Cumprod, Range and LinSpace (segment reductions: segments.py).

Every kernel returns exactly its op's dtype: integer sums and products stay in their type (numpy would
widen them), float16 accumulates in float32 and is cast back, integer means truncate toward zero like TF.
"""

import functools
import math

import numpy as np

from tensorweave.extension import KernelSet, range_size

from tensorweave_cpu.kernels.math import broadcast_axes_of_shapes, quietly
from tensorweave_cpu.kernels.shape import reshape

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"All", "Any", "ArgMax", "ArgMin", "Cumprod", "Cumsum", "Max", "Mean", "Min",
    "Prod", "Sum", "EuclideanNorm", "_SumToShape"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too.
Range (arange of 0-d arrays) is not."""


def reduction_axes(axes, ndim):
    """The reduction axes as a sorted tuple of non-negative ints; out-of-range axes are an error."""
    flat = axes.reshape(-1).tolist()
    for a in flat:
        if not -ndim <= a < ndim:
            raise ValueError(f"Invalid reduction dimension {a} for input with {ndim} dimensions")
    return tuple(sorted({a % ndim for a in flat}))


def _accumulator(dtype):
    return np.float32 if dtype == np.float16 else dtype


def _reduction(op_type, reduce, quiet=False, identity_without_axes=True):
    """``reduce(xp, x, axes, keep, dtype)`` as a kernel; the result is cast to the op's dtype if needed. With no
    axes to reduce a reduction is the identity (a copy): the common case of the Sums in broadcast gradients."""
    def build(node):
        xp = node.device.array_module
        keep = node.attrs["keep_dims"]
        dtype = np.dtype(node.output_dtypes[0].as_numpy_dtype)

        def compute(x, axes):
            axes = reduction_axes(axes, x.ndim)
            if not axes and identity_without_axes:
                return x.astype(dtype)
            out = reduce(xp, x, axes, keep, dtype)
            return out if out.dtype == dtype else out.astype(dtype)
        return quietly(compute, xp) if quiet else compute
    KERNELS.add(op_type, build=build)


def _mean(xp, x, axes, keep, dtype):
    """The sum over the count (numpy's mean, without its warning on an empty axis: TF gives NaN quietly).
    Integers are summed in 64 bits, so a mean of small integers is exact (as TF's), then truncated to zero."""
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if dtype.kind in "iu":
        total = xp.sum(x, axis=axes, keepdims=keep, dtype=np.int64 if dtype.kind == "i" else np.uint64)
        count = max(count, 1)
        floor = total // count
        return floor + ((floor * count != total) & (total < 0)) if dtype.kind == "i" else floor
    return xp.true_divide(xp.sum(x, axis=axes, keepdims=keep, dtype=_accumulator(dtype)), count)


def _extreme(pick, empty_value):
    """Max/Min; an empty reduction gives the lowest/highest value of the type, as in TF."""
    def reduce(xp, x, axes, keep, dtype):
        if x.size:
            return pick(xp)(x, axis=axes, keepdims=keep)
        shape = xp.sum(x, axis=axes, keepdims=keep).shape
        return xp.full(shape, empty_value(dtype), dtype=dtype)
    return reduce


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _sum(xp, x, axes, keep, dtype):
    return x.sum(axis=axes, keepdims=keep, dtype=_accumulator(dtype))


_reduction("Sum", _sum)
_reduction("Prod", lambda xp, x, axes, keep, dtype: xp.prod(x, axis=axes, keepdims=keep, dtype=_accumulator(dtype)))
_reduction("Mean", _mean, quiet=True)


@KERNELS.register("_SumToShape")
def _sum_to_shape(grad, shape):
    """What Reshape(Sum(grad, BroadcastGradientArgs(shape, Shape(grad))[0]), shape) gives: when no axis is summed,
    the gradient itself (as Identity gives its input) or a view of it, as the Sum's copy is not needed."""
    axes, dims = _sum_to_shape_plan(tuple(shape.tolist()), grad.shape)
    if axes:
        total = _sum(None, grad, axes, False, grad.dtype)
        grad = total if total.dtype == grad.dtype else total.astype(grad.dtype)
    if dims is None:
        return reshape(grad, shape)
    return grad if grad.shape == dims else grad.reshape(dims)


@functools.lru_cache(maxsize=4096)
def _sum_to_shape_plan(target, grad_shape):
    """(axes to sum, the shape to give the sum, or None to leave it to Reshape's checks) for one shape pair: a
    loop's backward pass asks the same few every iteration."""
    axes = tuple(broadcast_axes_of_shapes(target, grad_shape)[0])
    summed = [d for axis, d in enumerate(grad_shape) if axis not in axes]
    fits = min(target, default=0) >= 0 and math.prod(target) == math.prod(summed)
    return axes, (target if fits else None)


def _euclidean_norm(xp, x, axes, keep, dtype):
    """sqrt(sum(|x| ** 2)); integers are summed in float64 and the root truncated, complex stays complex."""
    if dtype.kind == "c":
        return xp.sqrt(xp.sum(x * xp.conj(x), axis=axes, keepdims=keep))
    wide = x.astype(np.float64 if dtype.kind in "iu" else _accumulator(dtype))
    return xp.sqrt(xp.sum(wide * wide, axis=axes, keepdims=keep))


_reduction("EuclideanNorm", _euclidean_norm, identity_without_axes=False)  # |x| even over no axes
_reduction("Max", _extreme(lambda xp: xp.max, _lowest))
_reduction("Min", _extreme(lambda xp: xp.min, _highest))
_reduction("All", lambda xp, x, axes, keep, dtype: xp.all(x, axis=axes, keepdims=keep))
_reduction("Any", lambda xp, x, axes, keep, dtype: xp.any(x, axis=axes, keepdims=keep))


def _axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an input of rank {ndim} (expected [-{ndim}, {ndim}))")
    return axis % ndim


def _arg_reduction(op_type, xp_name, nan_stand_in):
    """ArgMax/ArgMin as TF computes them: NaNs are skipped (they stand in as the value no entry can beat),
    so a row of NaNs, or of NaNs and the stand-in, gives index 0; ties give the first index."""
    def build(node):
        xp = node.device.array_module
        pick = getattr(xp, xp_name)
        dtype = node.output_dtypes[0].as_numpy_dtype
        inexact = np.dtype(node.input_dtypes[0].as_numpy_dtype).kind == "f"

        def compute(x, dimension):
            axis = _axis(dimension, x.ndim)
            if x.shape[axis] == 0:
                raise ValueError(f"{op_type} over axis {axis} of shape {x.shape}: the axis is empty")
            if inexact:
                x = xp.where(xp.isnan(x), nan_stand_in(x.dtype), x)
            return pick(x, axis=axis).astype(dtype)
        return compute
    KERNELS.add(op_type, build=build)


_arg_reduction("ArgMax", "argmax", _lowest)
_arg_reduction("ArgMin", "argmin", _highest)


def _cumulative(op_type, runner, identity):
    """Running sums/products/logsumexps; exclusive shifts by one (the identity first), reverse runs from the end."""
    def build(node):
        xp = node.device.array_module
        run = runner(xp)
        exclusive, reverse = node.attrs["exclusive"], node.attrs["reverse"]
        dtype = np.dtype(node.output_dtypes[0].as_numpy_dtype)

        def compute(x, axis):
            axis = _axis(axis, x.ndim)
            if reverse:
                x = xp.flip(x, axis)
            out = run(x, axis=axis, dtype=_accumulator(dtype))
            if exclusive and x.shape[axis]:
                shifted = xp.empty_like(out)
                before = (slice(None),) * axis
                shifted[before + (0,)] = identity
                shifted[before + (slice(1, None),)] = out[before + (slice(None, -1),)]
                out = shifted
            if reverse:
                out = xp.flip(out, axis)
            return out.astype(dtype, copy=False)
        return compute
    KERNELS.add(op_type, build=build)


_cumulative("Cumsum", lambda xp: xp.cumsum, 0)
_cumulative("Cumprod", lambda xp: xp.cumprod, 1)
_cumulative("CumulativeLogsumexp", lambda xp: lambda x, axis, dtype: xp.logaddexp.accumulate(x, axis=axis, dtype=dtype),
            -np.inf)


@KERNELS.register_build("Range")
def _range(node):
    xp = node.device.array_module
    dtype = node.output_dtypes[0].as_numpy_dtype

    def compute(start, limit, delta):
        range_size(start.item(), limit.item(), delta.item())
        return xp.arange(start, limit, delta, dtype=dtype)
    return compute


@KERNELS.register_build("LinSpace")
def _lin_space(node):
    dtype = node.output_dtypes[0].as_numpy_dtype

    def compute(start, stop, num):
        if int(num) <= 0:
            raise ValueError(f"Requires num > 0: {int(num)}")
        return np.linspace(start, stop, int(num)).astype(dtype, copy=False)
    return compute
