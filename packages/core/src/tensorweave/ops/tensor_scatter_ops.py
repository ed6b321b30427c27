"""Scattering into a copy of a tensor: ``tf.tensor_scatter_nd_update/add/sub`` (TensorScatterUpdate/Add/Sub, TF 1.15's
``tensor_scatter_update/add/sub`` too) with TF's gradients, and ``tf.batch_gather``."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import fill_ops, gather_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tensor_scatter_update",
           "tensor_scatter_add", "tensor_scatter_sub", "batch_gather"]


def _shape(op):
    tensor, indices, updates = (t.shape for t in op.inputs)
    depth = indices[-1].value if indices.ndims else None
    if depth is not None and tensor.ndims is not None and updates.ndims is not None:
        if depth > tensor.ndims:
            raise ValueError(f"{op.type}: index vectors of length {depth} cannot index a tensor of rank "
                             f"{tensor.ndims} ({tensor})")
        expected = indices[:-1].concatenate(tensor[depth:])
        if not expected.is_compatible_with(updates):
            raise ValueError(f"{op.type}: updates must have shape indices.shape[:-1] + tensor.shape[{depth}:] = "
                             f"{expected}, got {updates}")
    return tensor


def _define(op_type, doc):
    return DEFS.define(op_type, inputs=["tensor: T", "indices: Tindices", "updates: T"], outputs=["output: T"],
                       attrs=["T: type", "Tindices: {int32, int64}"], shape_fn=_shape, doc=doc)


UPDATE = _define("TensorScatterUpdate", "A copy of tensor with the slices at indices replaced by updates.")
ADD = _define("TensorScatterAdd", "A copy of tensor with updates added at indices (duplicates add up).")
SUB = _define("TensorScatterSub", "A copy of tensor with updates subtracted at indices (duplicates add up).")


@UPDATE.set_gradient
def _update_grad(op, grad):
    indices, updates = op.inputs[1], op.inputs[2]
    return [tensor_scatter_nd_update(grad, indices, fill_ops.zeros_like(updates)), None,
            gather_ops.gather_nd(grad, indices)]


ADD.set_gradient(lambda op, grad: [grad, None, gather_ops.gather_nd(grad, op.inputs[1])])
SUB.set_gradient(lambda op, grad: [grad, None, unary_math_ops.negative(gather_ops.gather_nd(grad, op.inputs[1]))])


def _wrapper(op_type, py_name):
    def wrapper(tensor, indices, updates, name=None):
        return apply_op(op_type, [tensor, indices, updates], name=name or op_type)
    wrapper.__name__ = wrapper.__qualname__ = py_name
    wrapper.__doc__ = f"{op_type}: a new tensor; ``tensor`` itself is unchanged."
    return wrapper


tensor_scatter_nd_update = tensor_scatter_update = _wrapper("TensorScatterUpdate", "tensor_scatter_nd_update")
tensor_scatter_nd_add = tensor_scatter_add = _wrapper("TensorScatterAdd", "tensor_scatter_nd_add")
tensor_scatter_nd_sub = tensor_scatter_sub = _wrapper("TensorScatterSub", "tensor_scatter_nd_sub")


def batch_gather(params, indices, name=None):
    """params[b..., indices[b..., j]]: a gather along the axis after the batch dims that params and indices share
    (TF 1.15's batch_gather: gather with batch_dims = rank(indices) - 1)."""
    with graph_mod.name_scope(name, "BatchGather", [params, indices]):
        indices = convert_to_tensor(indices, name="indices")
        params = convert_to_tensor(params, name="params")
        if indices.shape.ndims is None:
            raise ValueError("batch_gather: indices must have a known rank")
        batch_dims = indices.shape.ndims - 1
        return gather_ops.gather(params, indices, axis=batch_dims, batch_dims=batch_dims)
