"""Learning-rate schedules of the global step, with TF1's formulas (computed in the learning rate's dtype)."""

import contextlib
import math

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_n_to_tensor, convert_to_tensor
from tensorweave.ops import comparison_ops, math_ops, random_ops, shape_ops, unary_math_ops
from tensorweave.ops import cond as cond_mod

__all__ = ["cosine_decay", "cosine_decay_restarts", "exponential_decay", "inverse_time_decay", "linear_cosine_decay",
           "natural_exp_decay", "noisy_linear_cosine_decay", "piecewise_constant", "polynomial_decay"]


@contextlib.contextmanager
def _schedule(fn_name, default_name, learning_rate, global_step, name):
    """The schedule's name scope, with the learning rate as a tensor and the step cast to its dtype."""
    if global_step is None:
        raise ValueError(f"global_step is required for {fn_name}.")
    with graph_mod.name_scope(name, default_name, [learning_rate, global_step]):
        learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
        yield learning_rate, unary_math_ops.cast(global_step, learning_rate.dtype), learning_rate.dtype


def _ratio(step, decay_steps, dtype, staircase):
    p = step / unary_math_ops.cast(decay_steps, dtype)
    return unary_math_ops.floor(p) if staircase else p


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr * decay_rate ^ (step / decay_steps), the exponent floored when ``staircase``."""
    with _schedule("exponential_decay", "ExponentialDecay", learning_rate, global_step, name) as (lr, step, dtype):
        return math_ops.multiply(lr, math_ops.pow(unary_math_ops.cast(decay_rate, dtype),
                                                  _ratio(step, decay_steps, dtype, staircase)))


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr * exp(-decay_rate * step / decay_steps), the ratio floored when ``staircase``."""
    with _schedule("natural_exp_decay", "NaturalExpDecay", learning_rate, global_step, name) as (lr, step, dtype):
        exponent = math_ops.multiply(unary_math_ops.negative(unary_math_ops.cast(decay_rate, dtype)),
                                     _ratio(step, decay_steps, dtype, staircase))
        return math_ops.multiply(lr, unary_math_ops.exp(exponent))


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr / (1 + decay_rate * step / decay_steps), the ratio floored when ``staircase``."""
    with _schedule("inverse_time_decay", "InverseTimeDecay", learning_rate, global_step, name) as (lr, step, dtype):
        denominator = math_ops.add(unary_math_ops.cast(1, dtype), math_ops.multiply(
            unary_math_ops.cast(decay_rate, dtype), _ratio(step, decay_steps, dtype, staircase)))
        return math_ops.div(lr, denominator)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    """(lr - end) * (1 - step / decay_steps) ^ power + end; held at end after decay_steps, or restarting
    every decay_steps when ``cycle``."""
    with _schedule("polynomial_decay", "PolynomialDecay", learning_rate, global_step, name) as (lr, step, dtype):
        end = unary_math_ops.cast(end_learning_rate, dtype)
        decay_steps = unary_math_ops.cast(decay_steps, dtype)
        if cycle:
            multiplier = comparison_ops.where(comparison_ops.equal(step, 0), unary_math_ops.cast(1, dtype),
                                        unary_math_ops.ceil(step / decay_steps))
            decay_steps = math_ops.multiply(decay_steps, multiplier)
        else:
            step = math_ops.minimum(step, decay_steps)
        p = math_ops.div(step, decay_steps)
        return math_ops.add(math_ops.multiply(lr - end, math_ops.pow(1 - p, unary_math_ops.cast(power, dtype))), end)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)."""
    with _schedule("cosine_decay", "CosineDecay", learning_rate, global_step, name) as (lr, step, dtype):
        decay_steps = unary_math_ops.cast(decay_steps, dtype)
        completed = math_ops.minimum(step, decay_steps) / decay_steps
        cosine = 0.5 * (1.0 + unary_math_ops.cos(unary_math_ops.cast(math.pi, dtype) * completed))
        return math_ops.multiply(lr, (1 - alpha) * cosine + alpha)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                          name=None):
    """SGDR: cosine decay that restarts after each period, period i lasting first_decay_steps * t_mul**i and
    starting from lr * m_mul**i."""
    with _schedule("cosine_decay_restarts", "SGDRDecay", learning_rate, global_step, name) as (lr, step, dtype):
        completed = step / unary_math_ops.cast(first_decay_steps, dtype)
        t_mul, m_mul, alpha = (unary_math_ops.cast(v, dtype) for v in (t_mul, m_mul, alpha))

        def geometric_periods():
            restart = unary_math_ops.floor(
                unary_math_ops.log(1.0 - completed * (1.0 - t_mul)) / unary_math_ops.log(t_mul))
            done = (1.0 - math_ops.pow(t_mul, restart)) / (1.0 - t_mul)
            return restart, (completed - done) / math_ops.pow(t_mul, restart)

        def equal_periods():
            restart = unary_math_ops.floor(completed)
            return restart, completed - restart

        restart, fraction = cond_mod.cond(comparison_ops.equal(t_mul, 1.0), equal_periods, geometric_periods)
        cosine = 0.5 * math_ops.pow(m_mul, restart) * (
            1.0 + unary_math_ops.cos(unary_math_ops.cast(math.pi, dtype) * fraction))
        return math_ops.multiply(lr, (1 - alpha) * cosine + alpha)


def _linear_cosine(fn_name, default_name, learning_rate, global_step, decay_steps, num_periods, alpha, beta, name,
                   noise=None):
    with _schedule(fn_name, default_name, learning_rate, global_step, name) as (lr, step, dtype):
        decay_steps = unary_math_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(step, decay_steps)
        linear = (decay_steps - step) / decay_steps
        if noise is not None:
            linear = linear + noise(step, dtype)
        fraction = unary_math_ops.cast(2.0 * math.pi * num_periods, dtype) * step / decay_steps
        cosine = 0.5 * (1.0 + unary_math_ops.cos(fraction))
        return math_ops.multiply(lr, (alpha + linear) * cosine + beta)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0, beta=0.001, name=None):
    """lr * ((alpha + linear) * cosine + beta), linear falling from 1 to 0 over decay_steps and cosine making
    num_periods periods in that time."""
    return _linear_cosine("linear_cosine_decay", "LinearCosineDecay", learning_rate, global_step, decay_steps,
                          num_periods, alpha, beta, name)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0, variance_decay=0.55,
                              num_periods=0.5, alpha=0.0, beta=0.001, name=None):
    """linear_cosine_decay with Gaussian noise added to the linear part, its variance
    initial_variance / (1 + step) ** variance_decay."""
    def noise(step, dtype):
        variance = initial_variance / math_ops.pow(1.0 + step, unary_math_ops.cast(variance_decay, dtype))
        return random_ops.random_normal(shape_ops.shape(variance), stddev=unary_math_ops.sqrt(variance), dtype=dtype)

    return _linear_cosine("noisy_linear_cosine_decay", "NoisyLinearCosineDecay", learning_rate, global_step,
                          decay_steps, num_periods, alpha, beta, name, noise=noise)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i], then values[-1]."""
    if len(boundaries) != len(values) - 1:
        raise ValueError(f"The length of boundaries should be 1 less than the length of values: {len(boundaries)} "
                         f"boundaries, {len(values)} values")
    with graph_mod.name_scope(name, "PiecewiseConstant", [x]):
        x = convert_to_tensor(x)
        boundaries = convert_n_to_tensor(boundaries)
        values = convert_n_to_tensor(values)
        for i, b in enumerate(boundaries):
            if b.dtype is not x.dtype:
                if b.dtype is dtypes.int32 and x.dtype is dtypes.int64:
                    boundaries[i] = unary_math_ops.cast(b, dtypes.int64)
                else:
                    raise ValueError(f"Boundaries ({b.dtype.name}) must have the same dtype as x ({x.dtype.name}).")
        for v in values[1:]:
            if v.dtype is not values[0].dtype:
                raise ValueError(f"Values must have elements all with the same dtype ({values[0].dtype.name} vs "
                                 f"{v.dtype.name}).")
        result = values[0]
        for boundary, value in zip(boundaries, values[1:]):
            result = comparison_ops.where(comparison_ops.greater(x, boundary), value, result)
        return result
