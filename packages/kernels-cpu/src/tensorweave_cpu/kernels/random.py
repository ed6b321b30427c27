"""CPU kernels for random ops.

Each node draws from one numpy Generator seeded from its (seed, seed2) attrs, or from fresh entropy when
both are 0. The generator lives in its device's resource manager, created when the node's first kernel is
built, so every plan of one session continues one stream and each new session starts it again (a seeded
graph repeats itself session after session). numpy's Generator locks around each call; kernels that draw
in several calls take the stream's own lock so concurrent steps cannot interleave them.
"""

import threading

import numpy as np

from tensorweave.extension import KernelSet, Resource

KERNELS = KernelSet("CPU")

_CONTAINER = "_random_streams"
_TRUNCATION = 2.0


class RandomStream(Resource):
    """One node's generator and the lock for multi-call draws."""

    def __init__(self, seed, seed2):
        self.generator = np.random.default_rng([seed, seed2] if seed or seed2 else None)
        self.lock = threading.Lock()

    def debug_string(self):
        return "RandomStream"


def node_stream(node):
    """The RandomStream of ``node`` in this session (one per node and graph, on the node's device)."""
    seed, seed2 = node.attrs.get("seed", 0), node.attrs.get("seed2", 0)
    graph = getattr(node.source, "graph", None)
    key = f"{node.name}@{id(graph):x}"
    return node.device.resource_manager.lookup_or_create(_CONTAINER, key, lambda: RandomStream(seed, seed2))


def node_generator(node):
    """(Generator, Lock) for a kernel of ``node``: see ``node_stream``."""
    stream = node_stream(node)
    return stream.generator, stream.lock


def _dims(shape):
    if shape.ndim != 1:
        raise ValueError(f"shape must be a vector, got a tensor of shape {list(shape.shape)}")
    if shape.size and shape.min() < 0:
        raise ValueError(f"shape must have non-negative entries, got {shape.tolist()}")
    return tuple(shape.tolist())


def _float_dtypes(node):
    """(the op's numpy dtype, the dtype numpy draws in): float16 draws in float32 and is cast."""
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)
    return out, (np.float64 if out == np.float64 else np.float32)


def _cast(values, dtype):
    return values if values.dtype == dtype else values.astype(dtype)


@KERNELS.register_build("RandomUniform")
def _random_uniform(node):
    rng, _ = node_generator(node)
    out, draw = _float_dtypes(node)
    if out == np.float16:
        step = np.float16(2.0 ** -11)  # every k / 2048 < 1 is exact in float16, so no draw rounds up to 1

        def compute_half(shape):
            return rng.integers(0, 2048, size=_dims(shape), dtype=np.uint16).astype(np.float16) * step
        return compute_half
    return lambda shape: rng.random(_dims(shape), dtype=draw)


@KERNELS.register_build("RandomUniformInt")
def _random_uniform_int(node):
    rng, _ = node_generator(node)
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(shape, minval, maxval):
        if minval.ndim or maxval.ndim:
            raise ValueError(f"minval and maxval must be scalars, got shapes {list(minval.shape)} and "
                             f"{list(maxval.shape)}")
        if minval >= maxval:
            raise ValueError(f"Need minval < maxval, got {minval} >= {maxval}")
        return rng.integers(minval, maxval, size=_dims(shape), dtype=out)
    return compute


@KERNELS.register_build("RandomStandardNormal")
def _random_standard_normal(node):
    rng, _ = node_generator(node)
    out, draw = _float_dtypes(node)
    return lambda shape: _cast(rng.standard_normal(_dims(shape), dtype=draw), out)


@KERNELS.register_build("TruncatedNormal")
def _truncated_normal(node):
    """Standard normal draws, redrawing (vectorized) only the ones beyond 2 until none is left."""
    rng, lock = node_generator(node)
    out, draw = _float_dtypes(node)

    def compute(shape):
        dims = _dims(shape)
        with lock:
            values = rng.standard_normal(dims, dtype=draw)
            flat = values.reshape(-1)
            outside = np.flatnonzero(np.abs(flat) > _TRUNCATION)
            while outside.size:
                flat[outside] = rng.standard_normal(outside.size, dtype=draw)
                outside = outside[np.abs(flat[outside]) > _TRUNCATION]
        return _cast(values, out)
    return compute


@KERNELS.register_build("RandomShuffle")
def _random_shuffle(node):
    rng, _ = node_generator(node)
    return lambda value: value.copy() if value.ndim == 0 else rng.permutation(value)


@KERNELS.register_build("Multinomial")
def _multinomial(node):
    """Inverse-CDF sampling of all rows at once: row r's CDF is offset by r so one searchsorted serves all."""
    rng, _ = node_generator(node)
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(logits, num_samples):
        if logits.ndim != 2:
            raise ValueError(f"logits must be a matrix [batch, classes], got shape {list(logits.shape)}")
        batch, classes, count = logits.shape[0], logits.shape[1], int(num_samples)
        if count < 0:
            raise ValueError(f"num_samples must be non-negative, got {count}")
        if batch == 0 or count == 0:
            return np.zeros((batch, count), out)
        if classes == 0:
            raise ValueError("logits has 0 classes: there is nothing to sample from")
        logits = logits.astype(np.float64)
        top = logits.max(axis=1, keepdims=True)
        if np.isnan(logits).any() or not np.isfinite(top).all():
            raise ValueError("logits must be finite or -inf, with at least one finite entry per row")
        weights = np.exp(logits - top)
        cdf = np.cumsum(weights, axis=1)
        cdf /= cdf[:, -1:]
        rows = np.arange(batch)[:, None]
        draws = rng.random((batch, count)) + rows
        picks = np.searchsorted((cdf + rows).reshape(-1), draws.reshape(-1), side="right").reshape(batch, count)
        picks -= rows * classes
        last_possible = classes - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)
        return np.minimum(picks, last_possible[:, None]).astype(out)
    return compute


@KERNELS.register_build("RandomGamma")
def _random_gamma(node):
    rng, _ = node_generator(node)
    out, draw = _float_dtypes(node)
    tiny = np.finfo(out).tiny

    def compute(shape, alpha):
        if alpha.size and not (alpha > 0).all():
            raise ValueError(f"alpha (the gamma shape parameter) must be positive, got min {alpha.min()}")
        values = rng.standard_gamma(alpha.astype(draw), size=_dims(shape) + alpha.shape, dtype=draw)
        return np.maximum(_cast(values, out), tiny)
    return compute


def _random_poisson(node):
    rng, _ = node_generator(node)
    out = np.dtype(node.output_dtypes[0].as_numpy_dtype)

    def compute(shape, rate):
        if rate.size and not (rate >= 0).all():
            raise ValueError(f"the Poisson rate must be non-negative, got min {rate.min()}")
        return rng.poisson(rate.astype(np.float64), size=_dims(shape) + rate.shape).astype(out)
    return compute


KERNELS.add("RandomPoisson", build=_random_poisson)
KERNELS.add("RandomPoissonV2", build=_random_poisson)
