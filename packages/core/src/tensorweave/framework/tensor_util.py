"""Static values of tensors where the graph determines them (for shape inference and folding).

Each op says how: its OpDef's ``constant_fn`` (the value) and ``shape_value_fn`` (the partly known shape a
shape tensor stands for), set beside its definition, as a plugin's op sets them.
"""

import numpy as np

from tensorweave.framework import tensor_shape


def constant_value(tensor):
    """The value of ``tensor`` if it is known while building the graph, else None."""
    if isinstance(tensor, (np.ndarray, int, float, list, tuple)):
        return np.asarray(tensor)
    op = getattr(tensor, "op", None)
    if op is None:
        return None
    evaluator = op.op_def.constant_fn
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
    partial = tensor.op.op_def.shape_value_fn
    if partial is not None:
        return partial(tensor.op, tensor.value_index)
    n = tensor.shape[0].value if tensor.shape.ndims == 1 else None
    return tensor_shape.unknown_shape(n)
