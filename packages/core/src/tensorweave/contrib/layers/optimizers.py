"""contrib.layers' ``optimize_loss``: one call from a loss to a train op, with the learning rate as a variable
(``OptimizeLoss/learning_rate``), an optimizer by name, class, instance or function, gradient clipping, noise and
multipliers, the update ops run first, and TF's summaries when tf.summary is installed."""

import numbers

from tensorweave import train
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.registry import get_registries
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    clip_ops, control_flow_ops, init_ops, random_ops, shape_ops, variable_scope as vs, variables as variables_mod,
)

__all__ = ["OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES", "optimize_loss"]

OPTIMIZER_CLS_NAMES = {
    "Adagrad": lambda learning_rate: train.AdagradOptimizer(learning_rate),
    "Adam": lambda learning_rate: train.AdamOptimizer(learning_rate),
    "Ftrl": lambda learning_rate: train.FtrlOptimizer(learning_rate),
    "Momentum": lambda learning_rate: train.MomentumOptimizer(learning_rate, momentum=0.9),
    "RMSProp": lambda learning_rate: train.RMSPropOptimizer(learning_rate),
    "SGD": lambda learning_rate: train.GradientDescentOptimizer(learning_rate),
}
OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm", "global_gradient_norm"]


def _learning_rate_variable(learning_rate):
    if learning_rate is None:
        return None
    if hasattr(learning_rate, "op") and learning_rate.shape.ndims == 0:
        return learning_rate
    if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool):
        if learning_rate < 0.0:
            raise ValueError(f"Invalid learning_rate {learning_rate}.")
        return vs.get_variable("learning_rate", [], trainable=False,
                               initializer=init_ops.constant_initializer(float(learning_rate)))
    raise ValueError(f"Learning rate should be 0d Tensor or float. Got {learning_rate!r} of type "
                     f"{type(learning_rate).__name__}")


def _make_optimizer(optimizer, lr):
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is string ({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}], you provided "
                             f"{optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](lr)
    if isinstance(optimizer, type) and issubclass(optimizer, train.Optimizer):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, train.Optimizer):
        return optimizer
    if callable(optimizer):
        made = optimizer(lr) if lr is not None else optimizer()
        if not isinstance(made, train.Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of Optimizer. Got {made!r}.")
        return made
    raise ValueError(f"Unrecognized optimizer: should be string, subclass of Optimizer, instance of subclass of "
                     f"Optimizer or function with one argument. Got {optimizer!r}.")


def _scale(gradient, factor):
    if isinstance(gradient, IndexedSlices):
        return IndexedSlices(gradient.values * factor, gradient.indices, gradient.dense_shape)
    return gradient * factor


def _multiplied(gradient, variable, multipliers):
    """The gradient times its variable's multiplier (keyed by the variable or its name, ``w:0``), as TF1."""
    for key, factor in multipliers.items():
        if gradient is not None and (key is variable or key == variable.name):
            return _scale(gradient, factor)
    return gradient


def _add_noise(gradients, scale):
    noisy = []
    for gradient, variable in gradients:
        if gradient is None:
            noisy.append((None, variable))
            continue
        values = gradient.values if isinstance(gradient, IndexedSlices) else gradient
        noise = random_ops.truncated_normal(shape_ops.shape(values)) * scale
        noisy.append((IndexedSlices(values + noise, gradient.indices, gradient.dense_shape)
                      if isinstance(gradient, IndexedSlices) else gradient + noise, variable))
    return noisy


def _summary_api(summaries):
    """tf.summary when the board package is installed; asking for summaries without it is an ImportError."""
    api = get_registries().api.get("summary")
    if api is None and summaries is not None and summaries:
        raise ImportError("optimize_loss(summaries=...) needs tf.summary: pip install tensorweave[board]")
    return api


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None, gradient_multipliers=None,
                  clip_gradients=None, learning_rate_decay_fn=None, update_ops=None, variables=None, name=None,
                  summaries=None, colocate_gradients_with_ops=False, increment_global_step=True):
    """A train tensor: ``loss``, evaluated after the update ops (GraphKeys.UPDATE_OPS by default) and after one
    optimizer step on ``variables`` (all trainable ones by default), under the scope ``OptimizeLoss``.

    ``optimizer`` is a name of OPTIMIZER_CLS_NAMES, an Optimizer class or instance, or a function of the learning
    rate; ``clip_gradients`` a float (the global norm) or a function of the (gradient, variable) list.
    """
    loss = convert_to_tensor(loss)
    if loss.shape.ndims not in (0, None):
        raise ValueError(f"Loss must be scalar, got shape {loss.shape} ({loss.name})")
    summary = _summary_api(summaries)
    if summaries is None:
        summaries = ["loss", "learning_rate", "global_gradient_norm"]
    for kind in summaries:
        if kind not in OPTIMIZER_SUMMARIES:
            raise ValueError(f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}], you provided {kind}.")
    if summary is None:
        summaries = []
    with vs.variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = list(dict.fromkeys(graph_mod.get_collection(GraphKeys.UPDATE_OPS)))
        if update_ops:
            loss = control_flow_ops.with_dependencies(list(update_ops), loss)
        lr = _learning_rate_variable(learning_rate)
        if lr is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
        if lr is not None and "learning_rate" in summaries:
            summary.scalar("learning_rate", lr)
        opt = _make_optimizer(optimizer, lr)
        if variables is None:
            variables = variables_mod.trainable_variables()
        gradients = opt.compute_gradients(loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gradient_noise_scale is not None:
            gradients = _add_noise(gradients, gradient_noise_scale)
        if gradient_multipliers is not None:
            gradients = [(_multiplied(g, v, gradient_multipliers), v) for g, v in gradients]
        if not gradients:
            raise ValueError("Empty list of (gradient, var) pairs encountered. This is most likely to be caused by "
                             "an improper value of gradient_multipliers.")
        if "global_gradient_norm" in summaries or "gradient_norm" in summaries:
            summary.scalar("global_norm/gradient_norm", clip_ops.global_norm([g for g, _ in gradients]))
        if isinstance(clip_gradients, float):
            clipped, _ = clip_ops.clip_by_global_norm([g for g, _ in gradients], clip_gradients)
            gradients = list(zip(clipped, [v for _, v in gradients]))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients).__name__} for clip_gradients")
        if "loss" in summaries:
            summary.scalar("loss", loss)
        grad_updates = opt.apply_gradients(gradients, global_step=global_step if increment_global_step else None,
                                           name="train")
        return control_flow_ops.with_dependencies([grad_updates], loss)
