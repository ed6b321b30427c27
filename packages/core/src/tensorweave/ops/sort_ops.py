"""``sort`` and ``argsort`` along any axis, built as TF builds them: the axis moved last, then TopKV2 over all of
it (of the negated values for ascending order), so the gradient is TopKV2's."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import shape_ops, unary_math_ops
from tensorweave.ops.top_k_ops import top_k
from tensorweave.ops.transpose_ops import transpose

__all__ = ["sort", "argsort"]


def _sorted_along(values, axis, direction, want_indices):
    values = convert_to_tensor(values, name="values")
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"sort: direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    rank = values.shape.ndims
    if rank is None:
        raise ValueError(f"sort: the values need a known rank, got shape {values.shape}")
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise ValueError(f"sort: axis must be an int in [{-rank}, {rank}) for values of shape {values.shape}, "
                         f"got {axis!r}")
    axis %= rank
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = values if axis == rank - 1 else transpose(values, perm)
    ascending = direction == "ASCENDING"
    keys = unary_math_ops.negative(moved) if ascending else moved
    count = moved.shape[-1].value if moved.shape[-1].value is not None else shape_ops.shape(moved)[-1]
    top, indices = top_k(keys, count)
    result = indices if want_indices else (unary_math_ops.negative(top) if ascending else top)
    return result if axis == rank - 1 else transpose(result, perm)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis``; ties keep their order."""
    with graph_mod.name_scope(name, "sort", [values]):
        return _sorted_along(values, axis, direction, want_indices=False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort ``values`` along ``axis`` (always stable: ties keep their order)."""
    with graph_mod.name_scope(name, "argsort", [values]):
        return _sorted_along(values, axis, direction, want_indices=True)
