"""CPU kernels for activations and their gradients, BiasAdd, TopKV2 and InTopKV2.

Written against ``xp`` (numpy here, cupy on a GPU) so a GPU package can register the same functions;
Python scalars keep the input's dtype, so float32 stays float32. Masks multiply rather than ``where``
(several times faster in numpy), which also lets a NaN gradient through as TF's kernels do.
"""

from tensorweave.extension import SELU_ALPHA, SELU_SCALE, KernelSet, bias_channel_axis

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"BiasAdd", "BiasAddGrad", "Elu", "EluGrad", "InTopKV2", "LeakyRelu",
    "LeakyReluGrad", "Relu", "Relu6", "Relu6Grad", "ReluGrad", "Selu", "SeluGrad", "Softplus", "SoftplusGrad",
    "Softsign", "SoftsignGrad", "TopKV2"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _sigmoid(x, xp):
    return xp.exp(-xp.logaddexp(0, -x))


@KERNELS.register("Relu")
def _relu(x, *, xp):
    return xp.maximum(x, 0)


@KERNELS.register("ReluGrad")
def _relu_grad(dy, x):
    return dy * (x > 0)


@KERNELS.register("Relu6")
def _relu6(x, *, xp):
    return xp.clip(x, 0, 6)


@KERNELS.register("Relu6Grad")
def _relu6_grad(dy, x):
    return dy * ((x > 0) & (x < 6))


@KERNELS.register("Elu")
def _elu(x, *, xp):
    return xp.where(x < 0, xp.expm1(xp.minimum(x, 0)), x)


@KERNELS.register("EluGrad")
def _elu_grad(dy, y, *, xp):
    return xp.where(y < 0, dy * (y + 1), dy)


@KERNELS.register("Selu")
def _selu(x, *, xp):
    return SELU_SCALE * xp.where(x < 0, SELU_ALPHA * xp.expm1(xp.minimum(x, 0)), x)


@KERNELS.register("SeluGrad")
def _selu_grad(dy, y, *, xp):
    return xp.where(y < 0, dy * (y + SELU_SCALE * SELU_ALPHA), dy * SELU_SCALE)


@KERNELS.register("Softplus")
def _softplus(x, *, xp):
    return xp.logaddexp(x, 0)


@KERNELS.register("SoftplusGrad")
def _softplus_grad(dy, x, *, xp):
    return dy * _sigmoid(x, xp)


@KERNELS.register("Softsign")
def _softsign(x, *, xp):
    return x / (1 + xp.abs(x))


@KERNELS.register("SoftsignGrad")
def _softsign_grad(dy, x, *, xp):
    denominator = 1 + xp.abs(x)
    return dy / (denominator * denominator)


@KERNELS.register("LeakyRelu")
def _leaky_relu(x, *, alpha, xp):
    return xp.where(x < 0, x * alpha, x)


@KERNELS.register("LeakyReluGrad")
def _leaky_relu_grad(dy, x, *, alpha, xp):
    return xp.where(x > 0, dy, dy * alpha)


def _channel_axis(value, data_format):
    if value.ndim < 2:
        raise ValueError(f"BiasAdd needs a value of rank 2 or more, got shape {list(value.shape)}")
    return bias_channel_axis(value.ndim, data_format)


@KERNELS.register("BiasAdd")
def _bias_add(value, bias, *, data_format):
    axis = _channel_axis(value, data_format)
    if bias.ndim != 1 or bias.shape[0] != value.shape[axis]:
        raise ValueError(f"bias of shape {list(bias.shape)} must be 1-D with as many elements as value's channel "
                         f"dimension {axis} (value shape {list(value.shape)}, data_format {data_format})")
    if axis != value.ndim - 1:
        bias = bias.reshape((-1,) + (1,) * (value.ndim - axis - 1))
    return value + bias


@KERNELS.register("BiasAddGrad")
def _bias_add_grad(dy, *, data_format):
    axis = _channel_axis(dy, data_format)
    return dy.sum(axis=tuple(a for a in range(dy.ndim) if a != axis), dtype=dy.dtype)


@KERNELS.register("TopKV2")
def _top_k(x, k, *, xp):
    k, columns = int(k), x.shape[-1] if x.ndim else 0
    if x.ndim == 0 or not 0 <= k <= columns:
        raise ValueError(f"input must be at least 1-D with at least k={k} columns, got shape {list(x.shape)}")
    # A stable ascending sort of the reversed row, read backwards: largest first, ties by lower index.
    order = xp.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    indices = (columns - 1 - order).astype(xp.int32)
    return xp.take_along_axis(x, indices, axis=-1), indices


@KERNELS.register("InTopKV2")
def _in_top_k(predictions, targets, k, *, xp):
    rows, classes = predictions.shape
    valid = (targets >= 0) & (targets < classes)
    target_values = predictions[xp.arange(rows), xp.where(valid, targets, 0)]
    better = (predictions > target_values[:, None]).sum(axis=1)
    return valid & xp.isfinite(target_values) & (better < int(k))
