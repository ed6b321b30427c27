"""Static values of tensors where the graph determines them (for shape inference and folding)."""

import numpy as np

from tensorweave.framework import tensor_shape

# op type -> fn(op, const_fn) returning a numpy value or None; op modules add their own entries.
_constant_evaluators = {}


def register_constant_evaluator(op_type):
    """Lets ``constant_value`` see through ops of ``op_type`` (e.g. Shape, Pack, Cast)."""
    def decorator(fn):
        _constant_evaluators[op_type] = fn
        return fn
    return decorator


def constant_value(tensor):
    """The value of ``tensor`` if it is known while building the graph, else None."""
    if isinstance(tensor, (np.ndarray, int, float, list, tuple)):
        return np.asarray(tensor)
    op = getattr(tensor, "op", None)
    if op is None:
        return None
    evaluator = _constant_evaluators.get(op.type)
    if evaluator is None:
        return None
    try:
        value = evaluator(op, tensor.value_index)
    except (TypeError, ValueError, IndexError):
        return None
    return None if value is None else np.asarray(value)


def constant_value_as_shape(tensor):
    """A TensorShape from a 1-D shape tensor, with unknown entries where values are unknown or -1."""
    value = constant_value(tensor)
    if value is not None:
        return tensor_shape.TensorShape([None if d < 0 else int(d) for d in np.asarray(value).reshape(-1)])
    op = tensor.op
    if op.type == "Pack":
        dims = []
        for t in op.inputs:
            v = constant_value(t)
            dims.append(None if v is None or int(v) < 0 else int(v))
        return tensor_shape.TensorShape(dims)
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "ConcatV2":
        result = tensor_shape.TensorShape([])
        for t in op.inputs[:-1]:
            result = result.concatenate(constant_value_as_shape(t))
        return result
    n = tensor.shape[0].value if tensor.shape.ndims == 1 else None
    return tensor_shape.unknown_shape(n)
