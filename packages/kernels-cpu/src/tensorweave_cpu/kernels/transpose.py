"""CPU kernels for reordering: Transpose, InvertPermutation, ReverseV2, ReverseSequence, Roll.

Transpose and ReverseV2 return numpy's views (nothing writes into kernel outputs in place; variables copy
on write). Written against the device's array module, so a GPU package can register the same functions.
"""

from tensorweave.extension import KernelSet, errors

from tensorweave_cpu.kernels.concat_split import _axis

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"InvertPermutation", "ReverseSequence", "ReverseV2", "Roll", "Transpose"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _permutation(perm, n, what):
    perm = [int(p) for p in perm.reshape(-1).tolist()]
    if len(perm) != n or sorted(perm) != list(range(n)):
        raise ValueError(f"{what} {perm} is not a permutation of [0, ..., {n - 1}]")
    return perm


@KERNELS.register("Transpose")
def _transpose(x, perm, *, xp):
    if perm.ndim != 1 or perm.shape[0] != x.ndim:
        raise ValueError(f"transpose: perm {perm.tolist()} must have one entry per dimension of the input, "
                         f"whose shape is {list(x.shape)}")
    return xp.transpose(x, _permutation(perm, x.ndim, "transpose: perm"))


@KERNELS.register("InvertPermutation")
def _invert_permutation(x, *, xp):
    if x.ndim != 1:
        raise ValueError(f"invert_permutation needs a vector, got shape {list(x.shape)}")
    _permutation(x, x.shape[0], "invert_permutation: the input")
    y = xp.empty_like(x)
    y[x] = xp.arange(x.shape[0], dtype=x.dtype)
    return y


@KERNELS.register("ReverseV2")
def _reverse(tensor, axis, *, xp):
    axes = [_axis(a, tensor.ndim, "the tensor to reverse") for a in axis.reshape(-1).tolist()]
    if len(set(axes)) != len(axes):
        raise ValueError(f"reverse: an axis is given more than once in {axis.tolist()}")
    return xp.flip(tensor, tuple(axes)) if axes else tensor


@KERNELS.register("ReverseSequence")
def _reverse_sequence(x, seq_lengths, *, seq_dim, batch_dim, xp):
    seq_dim = _axis(seq_dim, x.ndim, "the sequences (seq_axis)")
    batch_dim = _axis(batch_dim, x.ndim, "the sequences (batch_axis)")
    if seq_dim == batch_dim:
        raise ValueError(f"seq_axis and batch_axis must differ, both are {seq_dim}")
    moved = xp.moveaxis(x, (batch_dim, seq_dim), (0, 1))
    batch, steps = moved.shape[:2]
    if seq_lengths.shape != (batch,):
        raise ValueError(f"seq_lengths of shape {list(seq_lengths.shape)} must have one entry per batch entry "
                         f"({batch}, dimension {batch_dim} of the input of shape {list(x.shape)})")
    lengths = seq_lengths.astype("int64")
    if batch and (lengths.min() < 0 or lengths.max() > steps):
        raise ValueError(f"seq_lengths {seq_lengths.tolist()} must lie in [0, {steps}] (the size of dimension "
                         f"{seq_dim})")
    t = xp.arange(steps)
    lengths = lengths[:, None]
    index = xp.where(t < lengths, lengths - 1 - t, t)
    return xp.moveaxis(moved[xp.arange(batch)[:, None], index], (0, 1), (batch_dim, seq_dim))


@KERNELS.register("Roll")
def _roll(x, shift, axis, *, xp):
    if shift.shape != axis.shape or shift.ndim > 1:
        raise errors.InvalidArgumentError(None, None, f"Roll: shift and axis must be scalars or vectors of one "
                                          f"shape, got {list(shift.shape)} and {list(axis.shape)}")
    axes = axis.reshape(-1).tolist()
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise errors.InvalidArgumentError(None, None, f"Roll: axis {a} is out of range for an input of rank "
                                              f"{x.ndim}")
    return xp.roll(x, tuple(shift.reshape(-1).tolist()), tuple(axes)) if axes else x
