"""CPU kernels for local response normalization (LRN) and its gradient, over the last (channel) axis."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"LRN", "LRNGrad"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _channel_window_sum(v, radius):
    """sum(v[..., c - radius : c + radius + 1]) for every channel c, clipped at the edges."""
    total = v.copy()
    for shift in range(1, min(radius, v.shape[-1] - 1) + 1):
        total[..., shift:] += v[..., :-shift]
        total[..., :-shift] += v[..., shift:]
    return total


def _check_rank4(x):
    if x.ndim != 4:
        raise ValueError(f"LRN needs a 4-D input (NHWC), got shape {list(x.shape)}")


@KERNELS.register("LRN")
def _lrn(x, *, depth_radius, bias, alpha, beta):
    _check_rank4(x)
    norm = bias + alpha * _channel_window_sum(x * x, depth_radius)
    return x * norm ** -beta


@KERNELS.register("LRNGrad")
def _lrn_grad(dy, x, y, *, depth_radius, bias, alpha, beta):
    # y_j = x_j * norm_j^-beta, norm_j = bias + alpha * sum_{i near j} x_i^2, so
    # dx_i = dy_i * norm_i^-beta - 2 alpha beta x_i * sum_{j near i} dy_j * y_j / norm_j.
    _check_rank4(x)
    norm = bias + alpha * _channel_window_sum(x * x, depth_radius)
    return dy * norm ** -beta - (2 * alpha * beta) * x * _channel_window_sum(dy * y / norm, depth_radius)
