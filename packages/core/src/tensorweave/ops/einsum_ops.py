"""Tensor contractions: ``einsum`` and ``tensordot``, built (as TF 1.15 builds them) from transpose, reshape,
matmul, reduce_sum and matrix_diag_part, so their gradients are those ops' gradients.

An einsum reduces its operands left to right, two at a time: each pair becomes one batched matmul whose batch
labels are kept, whose contracted labels are summed and whose free labels are flattened into the matrix rows and
columns. A label repeated within one operand takes the diagonal; a label no later operand or the output uses is
summed out first. Dimensions are Python ints where the static shape knows them, so outputs keep static shapes.
"""

import functools
import operator
import string

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import concat_split_ops, reduction_ops, shape_ops
from tensorweave.ops.matmul_ops import matmul
from tensorweave.ops.matrix_diag_ops import matrix_diag_part
from tensorweave.ops.transpose_ops import transpose

__all__ = ["einsum", "tensordot"]

_ELLIPSIS_LABELS = [chr(0x3b1 + i) for i in range(24)]  # Greek letters stand for the dims '...' covers


# ---- dimensions: Python ints where known, scalar tensors otherwise -------------------------------------------------
def _dims(t):
    static = t.shape.as_list()
    dynamic = None
    out = []
    for i, d in enumerate(static):
        if d is None:
            dynamic = shape_ops.shape(t) if dynamic is None else dynamic
            d = dynamic[i]
        out.append(d)
    return out


def _product(dims):
    if all(isinstance(d, int) for d in dims):
        return functools.reduce(operator.mul, dims, 1)
    return reduction_ops.reduce_prod(concat_split_ops.stack([convert_to_tensor(d, dtype=dtypes.int32) for d in dims]))


def _shape(dims):
    if all(isinstance(d, int) for d in dims):
        return list(dims)
    return concat_split_ops.stack([convert_to_tensor(d, dtype=dtypes.int32) for d in dims])


def _permute(t, labels, order):
    perm = [labels.index(label) for label in order]
    return t if perm == list(range(len(perm))) else transpose(t, perm)


# ---- einsum -------------------------------------------------------------------------------------------------------
def _parse(equation, inputs):
    """(labels of each input, output labels), with '...' expanded to labels of its own."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(inputs):
        raise ValueError(f"einsum: the equation {equation!r} names {len(terms)} operands, but {len(inputs)} "
                         f"tensors were given")
    allowed = set(string.ascii_letters)
    labels, ellipsis_rank = [], 0
    for term, t in zip(terms, inputs):
        body = term.replace("...", "")
        if set(body) - allowed or term.count("...") > 1 or "." in body:
            raise ValueError(f"einsum: bad subscripts {term!r} in {equation!r} (letters, and at most one '...')")
        if "..." in term:
            if t.shape.ndims is None:
                raise ValueError(f"einsum: the operand for {term!r} needs a known rank to expand '...'")
            ellipsis_rank = max(ellipsis_rank, t.shape.ndims - len(body))
        elif t.shape.ndims is not None and t.shape.ndims != len(term):
            raise ValueError(f"einsum: subscripts {term!r} name {len(term)} dimensions, but the operand has shape "
                             f"{t.shape}")
        labels.append(term)
    ellipsis = _ELLIPSIS_LABELS[:ellipsis_rank]

    def expand(term, rank):
        if "..." not in term:
            return list(term)
        head, tail = term.split("...")
        covered = rank - len(head) - len(tail)
        if covered < 0:
            raise ValueError(f"einsum: subscripts {term!r} name more dimensions than the operand's {rank}")
        return list(head) + ellipsis[len(ellipsis) - covered:] + list(tail)

    in_labels = [expand(term, len(term) if t.shape.ndims is None else t.shape.ndims)
                 for term, t in zip(labels, inputs)]
    if arrow:
        if set(rhs.replace("...", "")) - allowed:
            raise ValueError(f"einsum: bad output subscripts {rhs!r} in {equation!r}")
        out_labels = expand(rhs, len(rhs.replace("...", "")) + len(ellipsis))
        known = {label for labels_ in in_labels for label in labels_}
        missing = [label for label in out_labels if label not in known]
        if missing or len(set(out_labels)) != len(out_labels):
            raise ValueError(f"einsum: output subscripts {rhs!r} must name each input label at most once "
                             f"(unknown: {''.join(missing)!r})")
    else:
        counts = {}
        for labels_ in in_labels:
            for label in labels_:
                counts[label] = counts.get(label, 0) + 1
        out_labels = ellipsis + sorted(label for label, n in counts.items() if n == 1 and label not in ellipsis)
    return in_labels, out_labels


def _diagonals(t, labels):
    """Takes the diagonal over each label that appears twice in one operand."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        label = next(l for l in labels if labels.count(l) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        others = [i for i in range(len(labels)) if i not in (first, second)]
        t = matrix_diag_part(transpose(t, others + [first, second]))
        labels = [labels[i] for i in others] + [label]
    return t, labels


def _sum_out(t, labels, keep):
    t, labels = _diagonals(t, labels)
    axes = [i for i, label in enumerate(labels) if label not in keep]
    if axes:
        t = reduction_ops.reduce_sum(t, axes)
        labels = [label for label in labels if label in keep]
    return t, labels


def _contract(x, x_labels, y, y_labels, keep):
    """One batched matmul: batch labels kept, shared labels summed, the others become rows and columns."""
    x, x_labels = _sum_out(x, x_labels, keep | set(y_labels))
    y, y_labels = _sum_out(y, y_labels, keep | set(x_labels))
    batch = [label for label in x_labels if label in y_labels and label in keep]
    summed = [label for label in x_labels if label in y_labels and label not in keep]
    rows = [label for label in x_labels if label not in y_labels]
    columns = [label for label in y_labels if label not in x_labels]
    x = _permute(x, x_labels, batch + rows + summed)
    y = _permute(y, y_labels, batch + summed + columns)
    x_dims, y_dims, n = _dims(x), _dims(y), len(batch)
    row_dims, column_dims = x_dims[n:n + len(rows)], y_dims[n + len(summed):]
    x = shape_ops.reshape(x, _shape(x_dims[:n] + [_product(row_dims), _product(x_dims[n + len(rows):])]))
    y = shape_ops.reshape(y, _shape(y_dims[:n] + [_product(y_dims[n:n + len(summed)]), _product(column_dims)]))
    product = matmul(x, y)
    batch_dims = _dims(product)[:n]
    return shape_ops.reshape(product, _shape(batch_dims + row_dims + column_dims)), batch + rows + columns


def einsum(equation, *inputs, **kwargs):
    """Sums of products over the labels of ``equation`` (numpy's einsum notation, with '...' and implicit output).

    ``tf.einsum('ij,jk->ik', a, b)`` is a matmul, ``'bij,bjk->bik'`` a batched one, ``'ii->i'`` a diagonal,
    ``'ij->'`` a sum; more than two operands are reduced left to right."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"einsum() got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
    if not inputs:
        raise ValueError("einsum: no operands given")
    with graph_mod.name_scope(name, "einsum", list(inputs)):
        tensors = [convert_to_tensor(x, name="input") for x in inputs]
        dtype = tensors[0].dtype
        if any(t.dtype != dtype for t in tensors):
            raise TypeError(f"einsum: operands must have one dtype, got {[t.dtype.name for t in tensors]}")
        in_labels, out_labels = _parse(equation, tensors)
        # an operand of unknown rank gets its subscripts' rank, checked when it runs
        tensors = [t if t.shape.ndims is not None else shape_ops.ensure_shape(t, [None] * len(labels))
                   for t, labels in zip(tensors, in_labels)]
        operands = list(zip(tensors, in_labels))
        while len(operands) > 1:
            (x, x_labels), (y, y_labels) = operands[:2]
            later = set(out_labels).union(*(labels for _, labels in operands[2:]))
            operands = [_contract(x, x_labels, y, y_labels, later)] + operands[2:]
        result, labels = _sum_out(*operands[0], set(out_labels))
        return _permute(result, labels, out_labels)


# ---- tensordot ----------------------------------------------------------------------------------------------------
def _axes_lists(axes, a_rank, b_rank):
    value = constant_value(axes) if not isinstance(axes, (int, list, tuple)) else axes
    if value is None:
        raise ValueError("tensordot: axes must be known when the graph is built (an int or two lists of ints)")
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, int):
        if value < 0 or value > min(a_rank, b_rank):
            raise ValueError(f"tensordot: axes={value} must be in [0, {min(a_rank, b_rank)}] for operands of ranks "
                             f"{a_rank} and {b_rank}")
        return list(range(a_rank - value, a_rank)), list(range(value))
    if len(value) != 2:
        raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}")
    a_axes, b_axes = ([v] if isinstance(v, int) else list(v) for v in value)
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: the two axis lists must have one length, got {a_axes} and {b_axes}")
    return [int(i) % a_rank for i in a_axes], [int(i) % b_rank for i in b_axes]


def tensordot(a, b, axes, name=None):
    """Sums a[..., i, ...] * b[..., i, ...] over ``axes``: an int N (a's last N with b's first N) or two lists."""
    with graph_mod.name_scope(name, "Tensordot", [a, b, axes]):
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        if a.shape.ndims is None or b.shape.ndims is None:
            raise ValueError(f"tensordot: both operands need a known rank, got shapes {a.shape} and {b.shape}")
        a_axes, b_axes = _axes_lists(axes, a.shape.ndims, b.shape.ndims)
        a_labels = list(string.ascii_letters[:a.shape.ndims])
        b_labels = list(string.ascii_letters[26:26 + b.shape.ndims])
        for i, j in zip(a_axes, b_axes):
            b_labels[j] = a_labels[i]
        out = [label for label in a_labels if label not in b_labels] + \
              [label for label in b_labels if label not in a_labels]
        result, labels = _contract(a, a_labels, b, b_labels, set(out))
        return _permute(result, labels, out)
