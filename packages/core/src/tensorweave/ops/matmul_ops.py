"""Matrix products: MatMul (rank 2, transpose flags) and BatchMatMul/BatchMatMulV2 (batches; V2 broadcasts them).

``tf.matmul`` picks MatMul for rank-2 operands and BatchMatMulV2 otherwise, as TF 1.15 does; adjoints
of complex operands are conjugate transposes. Batch gradients are summed back over broadcast batch dims.
"""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.flops import input_dims, num_elements
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import unary_math_ops
from tensorweave.ops.broadcast_gradient_ops import unbroadcast
from tensorweave.ops.math_ops import as_same_dtype_tensors

DEFS = OpDefList()

__all__ = ["matmul", "sparse_matmul"]

_TYPES = "T: {float16, float32, float64, int32, int64, complex64, complex128}"


def _matmul_flops(node):
    """Two operations (a multiply and an add) per output element and inner index."""
    a = input_dims(node, 0)
    if a is None or len(a) < 2:
        return None
    transposed = node.attrs.get("transpose_a", False) or node.attrs.get("adj_x", False)
    return 2 * num_elements(node.output_shapes[0]) * (a[-2] if transposed else a[-1])


MATMUL = DEFS.define("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
                     attrs=[_TYPES, "transpose_a: bool = False", "transpose_b: bool = False"],
                     flops_fn=_matmul_flops, is_intra_op_parallel=True,
                     doc="Matrix product of two rank-2 tensors, optionally transposed.")


def _check_inner(k1, k2, op, flags):
    if not k1.is_compatible_with(k2):
        raise ValueError(f"matmul dimensions must agree: inner dimensions {k1} and {k2} differ "
                         f"(shapes {op.inputs[0].shape} and {op.inputs[1].shape}, {flags})")


@MATMUL.set_shape_fn
def _matmul_shape(op):
    a, b = (t.shape.with_rank(2) for t in op.inputs)
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    m, k1 = (a[1], a[0]) if ta else (a[0], a[1])
    k2, n = (b[1], b[0]) if tb else (b[0], b[1])
    _check_inner(k1, k2, op, f"transpose_a={ta}, transpose_b={tb}")
    return tensor_shape.TensorShape([m, n])


def _conj(t):
    return unary_math_ops.conj(t)


@MATMUL.set_gradient
def _matmul_grad(op, grad):
    a, b = (_conj(t) for t in op.inputs)
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not ta and not tb:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True), matmul(grad, a, transpose_a=True, transpose_b=True)]


def _batch_matmul(op_type, broadcast, doc):
    return DEFS.define(op_type, inputs=["x: T", "y: T"], outputs=["output: T"],
                       attrs=[_TYPES, "adj_x: bool = False", "adj_y: bool = False"],
                       shape_fn=lambda op: _batch_matmul_shape(op, broadcast), flops_fn=_matmul_flops,
                       is_intra_op_parallel=True, doc=doc)


def _batch_matmul_shape(op, broadcast):
    x, y = (t.shape.with_rank_at_least(2) for t in op.inputs)
    if x.ndims is None or y.ndims is None:
        return tensor_shape.TensorShape(None)
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    m, k1 = (x[-1], x[-2]) if adj_x else (x[-2], x[-1])
    k2, n = (y[-1], y[-2]) if adj_y else (y[-2], y[-1])
    _check_inner(k1, k2, op, f"adj_x={adj_x}, adj_y={adj_y}")
    if broadcast:
        batch = common_shapes.broadcast_shapes(x[:-2], y[:-2])
    elif x.ndims != y.ndims or not x[:-2].is_compatible_with(y[:-2]):
        raise ValueError(f"BatchMatMul needs the same batch dimensions, got {x[:-2]} and {y[:-2]} "
                         f"(BatchMatMulV2, which tf.matmul uses, broadcasts them)")
    else:
        batch = x[:-2].merge_with(y[:-2])
    return batch.concatenate([m, n])


BATCH_MATMUL = _batch_matmul("BatchMatMul", False, "Matrix products over matching batch dims (adj: conj transpose).")
BATCH_MATMUL_V2 = _batch_matmul("BatchMatMulV2", True, "Matrix products over broadcast batch dims.")


def _batch_matmul_grad(op, grad):
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not adj_x and not adj_y:
        gx, gy = matmul(grad, y, adjoint_b=True), matmul(x, grad, adjoint_a=True)
    elif not adj_x:
        gx, gy = matmul(grad, y), matmul(grad, x, adjoint_a=True)
    elif not adj_y:
        gx, gy = matmul(y, grad, adjoint_b=True), matmul(x, grad)
    else:
        gx, gy = matmul(y, grad, adjoint_a=True, adjoint_b=True), matmul(grad, x, adjoint_a=True, adjoint_b=True)
    return [unbroadcast(gx, x, _batch_dims(y)), unbroadcast(gy, y, _batch_dims(x))]


def _batch_dims(t):
    """t's shape as a broadcast partner of the other operand: its batch dims, with the matrix dims as 1."""
    return t.shape[:-2].concatenate([1, 1]) if t.shape.ndims is not None else tensor_shape.TensorShape(None)


BATCH_MATMUL.set_gradient(_batch_matmul_grad)
BATCH_MATMUL_V2.set_gradient(_batch_matmul_grad)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, name=None):
    """a @ b: a matrix product for rank-2 tensors, batched (broadcasting batch dims) for higher ranks.

    ``adjoint_*`` conjugate-transposes (the same as ``transpose_*`` for real types). The sparsity hints are
    accepted and do not change the result.
    """
    for side, t, adj in (("a", transpose_a, adjoint_a), ("b", transpose_b, adjoint_b)):
        if t and adj:
            raise ValueError(f"matmul: only one of transpose_{side} and adjoint_{side} can be True")
    a, b = as_same_dtype_tensors(a, b)
    if not any(t.shape.ndims is None or t.shape.ndims > 2 for t in (a, b)):
        if adjoint_a:
            a, transpose_a = _conj(a), True
        if adjoint_b:
            b, transpose_b = _conj(b), True
        return apply_op("MatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b},
                        name=name or "MatMul")
    if transpose_a:
        a, adjoint_a = _conj(a), True
    if transpose_b:
        b, adjoint_b = _conj(b), True
    return apply_op("BatchMatMulV2", [a, b], {"adj_x": adjoint_a, "adj_y": adjoint_b}, name=name or "MatMul")


def sparse_matmul(a, b, transpose_a=False, transpose_b=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """TF1's ``tf.sparse_matmul``: a float32 product of float32 or bfloat16 matrices (the sparsity hints only
    chose TF's kernel); the values are ``matmul``'s."""
    operands = []
    for side, t in (("a", a), ("b", b)):
        t = convert_to_tensor(t, name=side)
        if t.dtype not in (dtypes.float32, dtypes.bfloat16):
            raise TypeError(f"Value passed to parameter '{side}' has DataType {t.dtype.name} not in list of allowed "
                            f"values: float32, bfloat16")
        operands.append(t if t.dtype is dtypes.float32 else unary_math_ops.cast(t, dtypes.float32))
    return apply_op("MatMul", operands, {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)},
                    name=name or "SparseMatMul")
