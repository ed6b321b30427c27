"""CPU kernels for concatenation and splitting: ConcatV2, Concat, Split, SplitV, Pack, Unpack.

Written against the device's array module, so a GPU package can register the same functions. Split and
Unpack outputs are views of their input (nothing writes into kernel outputs in place).
"""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Concat", "ConcatV2", "Pack", "Split", "SplitV", "Unpack"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _axis(axis, rank, what):
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for {what} of rank {rank} (expected [-{rank}, {rank}))")
    return axis % rank


def _shapes(arrays):
    return ", ".join(str(list(a.shape)) for a in arrays)


def _concatenate(values, axis, xp):
    rank = values[0].ndim
    if rank == 0:
        raise ValueError("cannot concatenate scalars (use tf.stack instead)")
    axis = _axis(axis, rank, "concat inputs")
    first = values[0].shape
    for v in values:
        if v.ndim != rank or v.shape[:axis] != first[:axis] or v.shape[axis + 1:] != first[axis + 1:]:
            raise ValueError(f"concat along axis {axis} needs inputs of one rank whose other dimensions agree, "
                             f"got shapes {_shapes(values)}")
    return xp.concatenate(values, axis)


@KERNELS.register("ConcatV2")
def _concat_v2(*args, xp):
    return _concatenate(args[:-1], args[-1], xp)


@KERNELS.register("Concat")
def _concat(concat_dim, *values, xp):
    return _concatenate(values, concat_dim, xp)


def _split_at(value, axis, sizes):
    bounds = [0]
    for s in sizes:
        bounds.append(bounds[-1] + s)
    index = (slice(None),) * axis
    return [value[index + (slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


@KERNELS.register("Split")
def _split(split_dim, value, *, num_split, xp):
    axis = _axis(split_dim, value.ndim, "the value to split")
    total = value.shape[axis]
    if total % num_split:
        raise ValueError(f"cannot split dimension {axis} of size {total} into {num_split} equal parts "
                         f"(shape {list(value.shape)}); pass a list of sizes to split unequally")
    return _split_at(value, axis, [total // num_split] * num_split)


@KERNELS.register("SplitV")
def _split_v(value, size_splits, split_dim, *, num_split, xp):
    axis = _axis(split_dim, value.ndim, "the value to split")
    sizes = [int(s) for s in size_splits.reshape(-1).tolist()]
    total = value.shape[axis]
    if len(sizes) != num_split or sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise ValueError(f"size_splits {sizes} must have num_split={num_split} entries, at most one of them -1 "
                         f"and none other negative")
    if -1 in sizes:
        sizes[sizes.index(-1)] = total - (sum(sizes) + 1)
    if sum(sizes) != total or min(sizes, default=0) < 0:
        raise ValueError(f"size_splits {size_splits.tolist()} do not add up to the size {total} of dimension "
                         f"{axis} of the value (shape {list(value.shape)})")
    return _split_at(value, axis, sizes)


@KERNELS.register("Pack")
def _pack(*values, axis, xp):
    first = values[0].shape
    if any(v.shape != first for v in values):
        raise ValueError(f"all inputs of stack must have one shape, got shapes {_shapes(values)}")
    return xp.stack(values, _axis(axis, values[0].ndim + 1, "the stacked result"))


@KERNELS.register("Unpack")
def _unpack(value, *, num, axis, xp):
    if value.ndim == 0:
        raise ValueError("cannot unstack a scalar")
    axis = _axis(axis, value.ndim, "the value to unstack")
    if value.shape[axis] != num:
        raise ValueError(f"cannot unstack dimension {axis} of size {value.shape[axis]} (shape "
                         f"{list(value.shape)}) into num={num} tensors")
    moved = xp.moveaxis(value, axis, 0)
    return [moved[i, ...] for i in range(num)]
