"""Random ops: uniform, normal, truncated normal, shuffle, multinomial, gamma and Poisson draws, random_crop.

Each op is stateful and carries the attrs ``seed``/``seed2`` that ``random_seed.get_seed`` derives from the
graph and op seeds (both 0: fresh entropy). Shapes are int32/int64 input tensors, so they may be computed
at run time; the static shape comes from the shape tensor wherever the graph determines it. The ops
themselves have no gradient; ``random_uniform``/``random_normal``/``truncated_normal`` with tensor bounds,
means or stddevs differentiate through the affine math that scales and shifts the standard draw.
"""

import numbers

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, random_seed, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, holds_tensor, is_tensor_like
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops import (
    array_ops, comparison_ops, fill_ops, logging_ops, math_ops, reduction_ops, shape_ops, slicing_ops,
)

DEFS = OpDefList()

__all__ = ["random_uniform", "random_normal", "truncated_normal", "random_shuffle", "multinomial", "random_gamma",
           "random_poisson", "random_crop"]

# The TF 1.13+ names under ``tf.random`` (tensorweave/random.py imports exactly these).
RANDOM_NAMESPACE = ["uniform", "normal", "truncated_normal", "shuffle", "categorical", "multinomial", "gamma",
                    "poisson", "set_random_seed", "get_seed"]

_SEEDS = ["seed: int = 0", "seed2: int = 0"]
_SHAPE_TYPE = "T: {int32, int64} = int32"
_FLOAT_OUT = "dtype: {float16, float32, float64}"


# ---- shape functions ------------------------------------------------------------------------------------------------
def shape_from_tensor(shape):
    """The static shape a 1-D shape tensor describes; its errors are raised while building."""
    shape.shape.with_rank(1)
    value = constant_value(shape)
    if value is not None and (np.asarray(value) < 0).any():
        raise ValueError(f"shape must have non-negative entries, got {np.asarray(value).tolist()}")
    return constant_value_as_shape(shape)


def _drawn_shape(op):
    return shape_from_tensor(op.inputs[0])


def _scalar_bounds_shape(op):
    for bound in op.inputs[1:]:
        if not bound.shape.is_compatible_with([]):
            raise ValueError(f"minval and maxval must be scalars, got shape {bound.shape}")
    return _drawn_shape(op)


def _batched_shape(op):
    """shape ++ params.shape: one draw per parameter entry for every index of ``shape``."""
    return shape_from_tensor(op.inputs[0]).concatenate(op.inputs[1].shape)


def _random(op_type, inputs, outputs, attrs, shape_fn, doc):
    return DEFS.define(op_type, inputs=inputs, outputs=outputs, attrs=attrs + _SEEDS, shape_fn=shape_fn,
                       grad=NOT_DIFFERENTIABLE, is_stateful=True, doc=doc)


RANDOM_UNIFORM = _random("RandomUniform", ["shape: T"], ["output: dtype"], [_FLOAT_OUT, _SHAPE_TYPE], _drawn_shape,
                         "Floats drawn uniformly from [0, 1).")
RANDOM_UNIFORM_INT = _random(
    "RandomUniformInt", ["shape: T", "minval: Tout", "maxval: Tout"], ["output: Tout"],
    ["Tout: {int32, int64}", _SHAPE_TYPE], _scalar_bounds_shape, "Integers drawn uniformly from [minval, maxval).")
RANDOM_STANDARD_NORMAL = _random("RandomStandardNormal", ["shape: T"], ["output: dtype"], [_FLOAT_OUT, _SHAPE_TYPE],
                                 _drawn_shape, "Draws from the normal distribution with mean 0 and stddev 1.")
TRUNCATED_NORMAL = _random("TruncatedNormal", ["shape: T"], ["output: dtype"], [_FLOAT_OUT, _SHAPE_TYPE],
                           _drawn_shape, "Standard normal draws, redrawn while more than 2 stddevs from 0.")
RANDOM_SHUFFLE = _random("RandomShuffle", ["value: T"], ["output: T"], ["T: any"],
                         lambda op: op.inputs[0].shape, "The value with its first dimension randomly permuted.")
RANDOM_GAMMA = _random("RandomGamma", ["shape: S", "alpha: T"], ["output: T"],
                       ["S: {int32, int64}", "T: {float16, float32, float64}"], _batched_shape,
                       "Gamma(alpha, 1) draws, one per alpha entry for every index of shape.")
RANDOM_POISSON = _random("RandomPoisson", ["shape: S", "rate: dtype"], ["output: dtype"],
                         ["S: {int32, int64}", _FLOAT_OUT], _batched_shape,
                         "Poisson(rate) draws as floats, one per rate entry for every index of shape.")
RANDOM_POISSON_V2 = _random(
    "RandomPoissonV2", ["shape: S", "rate: R"], ["output: dtype"],
    ["S: {int32, int64}", "R: {float16, float32, float64, int32, int64} = float64",
     "dtype: {float16, float32, float64, int32, int64} = int64"], _batched_shape,
    "Poisson(rate) draws in any numeric dtype, one per rate entry for every index of shape.")
MULTINOMIAL = _random("Multinomial", ["logits: T", "num_samples: int32"], ["output: output_dtype"],
                      ["T: real", "output_dtype: {int32, int64} = int64"], None,
                      "num_samples class indices per row of [batch, classes] logits (unnormalized log-probs).")


@MULTINOMIAL.set_shape_fn
def _multinomial_shape(op):
    logits, num_samples = op.inputs
    logits = logits.shape.with_rank(2)
    num_samples.shape.with_rank(0)
    count = constant_value(num_samples)
    if count is not None and int(count) < 0:
        raise ValueError(f"num_samples must be non-negative, got {int(count)}")
    return tensor_shape.TensorShape([logits[0], None if count is None else int(count)])


# ---- building helpers -----------------------------------------------------------------------------------------------
def _seed_attrs(seed):
    seed1, seed2 = random_seed.get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def shape_tensor(shape, what="shape"):
    """``shape`` as a 1-D int32/int64 tensor: tensors pass through; lists may mix ints and scalar tensors."""
    if is_tensor_like(shape) or isinstance(shape, (list, tuple)) and holds_tensor(shape):
        shape = convert_to_tensor(shape, name=what)
        if shape.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"{what} must be an int32 or int64 tensor, got {shape.dtype.name} ({shape.name}); "
                            f"cast it with tf.cast(..., tf.int32)")
        return shape
    if isinstance(shape, tensor_shape.TensorShape):
        shape = shape.dims
    if isinstance(shape, (list, tuple)) or shape is None:
        shape = None if shape is None else [tensor_shape.dimension_value(d) for d in shape]
        if shape is None or None in shape:
            raise ValueError(f"{what} {shape} has an unknown dimension; pass a shape tensor (e.g. tf.shape(x)) "
                             f"to draw a shape known only at run time")
    if isinstance(shape, (numbers.Number, np.number)) or (isinstance(shape, np.ndarray) and shape.ndim != 1):
        raise ValueError(f"{what} must be a 1-D list of dimensions, got {shape!r}; to draw n values use [n]")
    dims = np.asarray(shape)
    if dims.size and (dims.dtype.kind not in "iu"):
        raise TypeError(f"{what} must hold integers, got {list(dims.reshape(-1))}")
    if (dims < 0).any():
        raise ValueError(f"{what} must have non-negative entries, got {dims.tolist()}")
    index_type = np.int64 if dims.size and dims.max() > np.iinfo(np.int32).max else np.int32
    return convert_to_tensor(dims.astype(index_type), name=what)


def _as_float_type(dtype, what):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{what}: dtype must be float16, float32 or float64, got {dtype.name}")
    return dtype


def _is_number(value, target):
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value == target


def _affine(draw, scale, offset, name):
    """draw * scale + offset, leaving out a None scale or offset (a plain draw is one op)."""
    if offset is None:
        return math_ops.multiply(draw, scale, name=name)
    return math_ops.add(draw if scale is None else math_ops.multiply(draw, scale), offset, name=name)


def _draw(op_type, shape, dtype, seed, plain, scope):
    """The standard draw; it takes the scope's own name when nothing scales or shifts it."""
    shape = shape_tensor(shape)
    return apply_op(op_type, [shape], {"dtype": dtype, **_seed_attrs(seed)}, name=scope if plain else op_type)


# ---- wrappers -------------------------------------------------------------------------------------------------------
def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Values drawn uniformly from [minval, maxval): floats (maxval defaults to 1) or int32/int64.

    Integer draws need ``maxval``; their bounds must be scalars. Float bounds may be tensors of any
    broadcastable shape, and the result differentiates with respect to them.
    """
    dtype = dtypes.as_dtype(dtype)
    with graph_mod.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        if dtype in (dtypes.int32, dtypes.int64):
            if maxval is None:
                raise ValueError(f"random_uniform: an integer dtype ({dtype.name}) needs maxval, the exclusive "
                                 f"upper bound; pass e.g. maxval=10")
            shape = shape_tensor(shape)
            low = convert_to_tensor(minval, dtype=dtype, name="min")
            high = convert_to_tensor(maxval, dtype=dtype, name="max")
            low_value, high_value = constant_value(low), constant_value(high)
            if low_value is not None and high_value is not None and np.all(low_value >= high_value):
                raise ValueError(f"random_uniform: minval ({low_value}) must be less than maxval ({high_value})")
            return apply_op("RandomUniformInt", [shape, low, high], _seed_attrs(seed), name=scope)
        if not dtype.is_floating:
            raise ValueError(f"random_uniform: dtype must be floating (float16/32/64) or int32/int64, "
                             f"got {dtype.name}")
        maxval = 1 if maxval is None else maxval
        low_is_zero = _is_number(minval, 0)
        plain = low_is_zero and _is_number(maxval, 1)
        draw = _draw("RandomUniform", shape, dtype, seed, plain, scope)
        if plain:
            return draw
        low = None if low_is_zero else convert_to_tensor(minval, dtype=dtype, name="min")
        if isinstance(minval, numbers.Real) and isinstance(maxval, numbers.Real):
            width = convert_to_tensor(maxval - minval, dtype=dtype, name="range")
        else:
            high = convert_to_tensor(maxval, dtype=dtype, name="max")
            width = high if low is None else math_ops.subtract(high, low)
        return _affine(draw, width, low, scope)


def _normal(op_type, default_name, shape, mean, stddev, dtype, seed, name):
    dtype = _as_float_type(dtype, default_name)
    with graph_mod.name_scope(name, default_name, [shape, mean, stddev]) as scope:
        mean_is_zero, stddev_is_one = _is_number(mean, 0), _is_number(stddev, 1)
        draw = _draw(op_type, shape, dtype, seed, mean_is_zero and stddev_is_one, scope)
        if mean_is_zero and stddev_is_one:
            return draw
        stddev = None if stddev_is_one else convert_to_tensor(stddev, dtype=dtype, name="stddev")
        mean = None if mean_is_zero else convert_to_tensor(mean, dtype=dtype, name="mean")
        return _affine(draw, stddev, mean, scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Values drawn from the normal distribution N(mean, stddev**2); mean and stddev may be tensors."""
    return _normal("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal draws with those more than 2 stddevs from the mean redrawn (the usual weight initializer)."""
    return _normal("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name)


def random_shuffle(value, seed=None, name=None):
    """``value`` with its first dimension shuffled: each slice value[i] lands at one random position."""
    value = convert_to_tensor(value, name="value")
    return apply_op("RandomShuffle", [value], _seed_attrs(seed), name=name or "RandomShuffle")


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """[batch, num_samples] class indices drawn from softmax(logits) per row of [batch, classes] logits."""
    output_dtype = dtypes.as_dtype(output_dtype or dtypes.int64)
    if output_dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"multinomial: output_dtype must be int32 or int64, got {output_dtype.name}")
    with graph_mod.name_scope(name, "multinomial", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        num_samples = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
        return apply_op("Multinomial", [logits, num_samples], {"output_dtype": output_dtype, **_seed_attrs(seed)},
                        name="Multinomial")


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """``tf.random.categorical``: multinomial with its output dtype called ``dtype``."""
    return multinomial(logits, num_samples, seed=seed, name=name or "categorical", output_dtype=dtype)


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Gamma(alpha, beta) draws of shape ``shape + broadcast(alpha, beta).shape`` (beta is the rate)."""
    dtype = _as_float_type(dtype, "random_gamma")
    with graph_mod.name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape = shape_tensor(shape)
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        if beta is None:
            return apply_op("RandomGamma", [shape, alpha], _seed_attrs(seed), name="RandomGamma")
        beta = convert_to_tensor(beta, dtype=dtype, name="beta")
        alpha_broadcast = math_ops.add(alpha, fill_ops.zeros_like(beta))
        draw = apply_op("RandomGamma", [shape, alpha_broadcast], _seed_attrs(seed), name="RandomGamma")
        return math_ops.maximum(np.finfo(dtype.as_numpy_dtype).tiny, math_ops.realdiv(draw, beta))


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """Poisson(lam) draws of shape ``shape + lam.shape`` in ``dtype`` (TF1's argument order: lam first)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise ValueError(f"random_poisson: dtype must be float16/32/64 or int32/int64, got {dtype.name}")
    with graph_mod.name_scope(name, "random_poisson", [lam, shape]):
        shape = shape_tensor(shape)
        lam = convert_to_tensor(lam, name="lam", preferred_dtype=dtypes.float32)
        if lam.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
            raise TypeError(f"random_poisson: lam must be float16/32/64 or int32/int64, got {lam.dtype.name}")
        return apply_op("RandomPoissonV2", [shape, lam], {"dtype": dtype, **_seed_attrs(seed)},
                        name="RandomPoissonV2")


def random_crop(value, size, seed=None, name=None):
    """A slice of ``value`` of shape ``size`` at a uniformly random offset (size[i] <= value.shape[i])."""
    with graph_mod.name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = shape_tensor(size, "size")
        value_shape, size_shape = value.shape, constant_value_as_shape(size)
        if value_shape.ndims is not None and size.shape[0].value not in (None, value_shape.ndims):
            raise ValueError(f"random_crop: size has {size.shape[0].value} entries for a value of rank "
                             f"{value_shape.ndims}; give one crop size per dimension")
        static_size = constant_value(size)
        static_value_shape = value_shape.as_list() if value_shape.is_fully_defined() else None
        shape = shape_ops.shape(value, out_type=size.dtype)
        if static_size is not None and static_value_shape is not None:
            if any(s > d for s, d in zip(static_size.tolist(), static_value_shape)):
                raise ValueError(f"random_crop: size {static_size.tolist()} does not fit in a value of shape "
                                 f"{static_value_shape}; every crop size must be at most its dimension")
        else:
            fits = reduction_ops.reduce_all(comparison_ops.greater_equal(shape, size))
            check = logging_ops.Assert(fits, ["random_crop: need size <= value shape, got value shape", shape,
                                              "and size", size], summarize=1000)
            with graph_mod.control_dependencies([check]):
                shape = array_ops.identity(shape)
        limit = shape - size + 1
        offset = math_ops.floormod(
            random_uniform(shape_ops.shape(shape), maxval=size.dtype.max, dtype=size.dtype, seed=seed), limit)
        crop = slicing_ops.slice(value, offset, size, name=scope)
        crop.set_shape(size_shape)
        return crop


# ---- the tf.random names --------------------------------------------------------------------------------------------
uniform, normal, shuffle, gamma = random_uniform, random_normal, random_shuffle, random_gamma
poisson = random_poisson
set_random_seed, get_seed = random_seed.set_random_seed, random_seed.get_seed
