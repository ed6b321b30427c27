"""Math ops: elementwise arithmetic with broadcasting, matmul, reductions, comparisons, casts."""

from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList

DEFS = OpDefList()

__all__ = ["add", "less", "matmul"]

_NUMERIC = "T: {float16, float32, float64, int8, int16, int32, int64, uint8, complex64, complex128}"


def _binary(name, doc):
    return DEFS.define(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[_NUMERIC],
                       shape_fn=common_shapes.broadcast_binary_shape, doc=doc)


ADD = _binary("Add", "x + y, broadcasting.")
ADD.is_commutative = True


LESS = DEFS.define("Less", inputs=["x: T", "y: T"], outputs=["z: bool"], attrs=["T: real"],
                   shape_fn=common_shapes.broadcast_binary_shape, grad=NOT_DIFFERENTIABLE, doc="x < y.")


def less(x, y, name=None):
    return apply_op("Less", [x, y], name=name or "Less")


def add(x, y, name=None):
    return apply_op("Add", [x, y], name=name or "Add")


MATMUL = DEFS.define("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
                     attrs=["T: {float16, float32, float64, int32, int64, complex64, complex128}",
                            "transpose_a: bool = False", "transpose_b: bool = False"],
                     doc="Matrix product of two rank-2 tensors, optionally transposed.")


@MATMUL.set_shape_fn
def _matmul_shape(op):
    a, b = (t.shape.with_rank(2) for t in op.inputs)
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    m, k1 = (a[1], a[0]) if ta else (a[0], a[1])
    k2, n = (b[1], b[0]) if tb else (b[0], b[1])
    if not k1.is_compatible_with(k2):
        raise ValueError(f"matmul dimensions must agree: inner dimensions {k1} and {k2} differ "
                         f"(shapes {op.inputs[0].shape} and {op.inputs[1].shape}, "
                         f"transpose_a={ta}, transpose_b={tb})")
    return tensor_shape.TensorShape([m, n])


@MATMUL.set_gradient
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not ta and not tb:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True), matmul(grad, a, transpose_a=True, transpose_b=True)]


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, name=None):
    """a @ b for rank-2 tensors (batched matmul for higher ranks)."""
    return apply_op("MatMul", [a, b], {"transpose_a": transpose_a or adjoint_a,
                                       "transpose_b": transpose_b or adjoint_b}, name=name or "MatMul")

