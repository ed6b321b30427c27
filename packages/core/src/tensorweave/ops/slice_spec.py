"""A StridedSlice spec (begin, end, strides and five masks) as the numpy index it means.

The shape function and every kernel read a spec through ``dense_key``, so build-time shapes and run-time
values follow one set of rules (TF's): an ellipsis stands for as many full slices as the rank leaves;
without one, full slices fill the trailing dimensions; a new-axis entry inserts a dimension of 1; a
shrink entry takes one index (its end and begin mask are ignored; it must be in range and use a positive
stride); a range entry is a Python slice, with ``None`` where its begin or end mask is set. Entries known
only at run time are ``UNKNOWN`` while building.
"""

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


class _Unknown:
    """A spec value known only when the graph runs."""

    def __repr__(self):
        return "?"


UNKNOWN = _Unknown()


def dense_key(rank, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
              shrink_axis_mask=0):
    """The index tuple (None, int/UNKNOWN, slice) that applies the spec to a tensor of ``rank`` dimensions.

    Every dimension is covered by exactly one int or slice entry. Raises ValueError for a spec that is
    invalid whatever the dimensions are (lengths differ, several ellipses, zero strides, too many indices).
    """
    n = len(begin)
    if len(end) != n or len(strides) != n:
        raise ValueError(f"begin, end and strides must have one length, got {len(begin)}, {len(end)} and "
                         f"{len(strides)}")
    ellipses = [i for i in range(n) if ellipsis_mask >> i & 1]
    if len(ellipses) > 1:
        raise ValueError(f"a slice may have one ellipsis (...), but ellipsis_mask {ellipsis_mask:#b} marks "
                         f"{len(ellipses)}")
    consuming = sum(1 for i in range(n) if not (ellipsis_mask | new_axis_mask) >> i & 1)
    if consuming > rank:
        raise ValueError(f"the slice indexes {consuming} dimensions, but the tensor has only {rank}")
    fill = [slice(None)] * (rank - consuming)
    key = []
    for i in range(n):
        bit = 1 << i
        stride = strides[i]
        if ellipsis_mask & bit:
            key.extend(fill)
        elif new_axis_mask & bit:
            key.append(None)
        elif stride == 0:
            raise ValueError(f"strides[{i}] is 0; a slice needs a non-zero stride")
        elif shrink_axis_mask & bit:
            if stride is not UNKNOWN and stride < 0:
                raise ValueError(f"index {i} of the slice takes a single element (shrink_axis_mask), which needs a "
                                 f"positive stride, got {stride}")
            key.append(begin[i])
        else:
            key.append(slice(None if begin_mask & bit else begin[i], None if end_mask & bit else end[i], stride))
    if not ellipses:
        key.extend(fill)
    return tuple(key)


def sliced_dims(key, dims):
    """The output dims of ``key`` applied to ``dims`` (ints or None); ValueError for an index out of range."""
    out = []
    axis = 0
    for item in key:
        if item is None:
            out.append(1)
            continue
        dim = dims[axis]
        if isinstance(item, slice):
            known = dim is not None and UNKNOWN not in (item.start, item.stop, item.step)
            out.append(len(range(*item.indices(dim))) if known else None)
        elif item is not UNKNOWN and dim is not None and not -dim <= item < dim:
            raise ValueError(f"index {item} is out of range for dimension {axis} of size {dim} "
                             f"(valid: {-dim} to {dim - 1})")
        axis += 1
    return out
