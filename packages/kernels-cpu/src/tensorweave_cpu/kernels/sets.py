"""CPU kernels for set operations: DenseToDenseSetOperation (each group's values as a sorted Python set
operation) and SetSize, with TF's rules for group shapes."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: sets are built in Python."""

_OPERATIONS = {"intersection": lambda a, b: a & b, "union": lambda a, b: a | b, "a-b": lambda a, b: a - b,
               "b-a": lambda a, b: b - a}


def _sparse_result(groups, group_shape, dtype):
    """The sorted values of each group as (indices, values, dense_shape), the last dimension the largest group."""
    width = max((len(g) for g in groups), default=0)
    indices, values = [], []
    for flat, group in enumerate(groups):
        position = np.unravel_index(flat, group_shape) if group_shape else ()
        for column, value in enumerate(sorted(group)):
            indices.append(list(position) + [column])
            values.append(value)
    rank = len(group_shape) + 1
    out_values = np.array(values, dtype=object if dtype.kind in "OS" else dtype)
    return (np.array(indices, np.int64).reshape(-1, rank), out_values.reshape(-1),
            np.array(list(group_shape) + [width], np.int64))


@KERNELS.register("DenseToDenseSetOperation")
def _dense_to_dense(set1, set2, *, set_operation, validate_indices, T):
    operation = _OPERATIONS.get(set_operation)
    if operation is None:
        raise ValueError(f"DenseToDenseSetOperation: set_operation must be one of {sorted(_OPERATIONS)}, got "
                         f"{set_operation!r}")
    if set1.ndim < 2 or set1.ndim != set2.ndim or set1.shape[:-1] != set2.shape[:-1]:
        raise ValueError(f"DenseToDenseSetOperation: the inputs must have rank 2 or more and the same shape but "
                         f"for the last dimension, got {list(set1.shape)} and {list(set2.shape)}")
    group_shape = set1.shape[:-1]
    rows1 = set1.reshape(-1, set1.shape[-1]).tolist()
    rows2 = set2.reshape(-1, set2.shape[-1]).tolist()
    groups = [operation(set(a), set(b)) for a, b in zip(rows1, rows2)]
    return _sparse_result(groups, group_shape, set1.dtype)


@KERNELS.register("SetSize")
def _set_size(set_indices, set_values, set_shape, *, validate_indices, T):
    shape = tuple(int(d) for d in set_shape)
    if len(shape) < 2:
        raise ValueError(f"SetSize: the input must have rank 2 or more, got dense shape {list(shape)}")
    groups = {}
    for index, value in zip(map(tuple, set_indices[:, :-1].tolist()), set_values.tolist()):
        groups.setdefault(index, set()).add(value)
    out = np.zeros(shape[:-1], np.int32)
    for index, group in groups.items():
        out[index] = len(group)
    return out
