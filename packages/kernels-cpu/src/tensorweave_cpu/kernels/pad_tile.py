"""CPU kernels for padding and tiling: Pad, PadV2, MirrorPad, MirrorPadGrad, Tile.

Constant padding fills with zero of the dtype (an empty string for strings); mirror padding refuses
paddings larger than TF allows rather than repeating the reflection as numpy would.
"""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"MirrorPad", "MirrorPadGrad", "Pad", "PadV2", "Tile"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _pairs(x, paddings, limit=None, mode=""):
    if paddings.shape != (x.ndim, 2):
        raise ValueError(f"paddings must have shape [rank, 2] = [{x.ndim}, 2] for an input of shape "
                         f"{list(x.shape)}, got shape {list(paddings.shape)}")
    pairs = [(int(b), int(a)) for b, a in paddings.tolist()]
    if any(b < 0 or a < 0 for b, a in pairs):
        raise ValueError(f"paddings must be non-negative, got {paddings.tolist()}")
    if limit is not None:
        for i, (d, (b, a)) in enumerate(zip(x.shape, pairs)):
            if max(b, a) > d - limit:
                raise ValueError(f"{mode} padding of dimension {i} (size {d}) by ({b}, {a}) is too large: each "
                                 f"side may be at most {d - limit}")
    return pairs


def _constant_pad(x, pairs, value, xp):
    """``x`` inside an array of ``value`` (np.pad would turn a string fill into numpy's bytes scalar)."""
    shape = tuple(d + b + a for d, (b, a) in zip(x.shape, pairs))
    out = xp.full(shape, value, dtype=x.dtype)
    out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, pairs))] = x
    return out


@KERNELS.register("Pad")
def _pad(x, paddings, *, xp):
    return _constant_pad(x, _pairs(x, paddings), b"" if x.dtype.kind == "O" else 0, xp)


@KERNELS.register("PadV2")
def _pad_v2(x, paddings, constant_values, *, xp):
    if constant_values.ndim:
        raise ValueError(f"constant_values must be a scalar, got shape {list(constant_values.shape)}")
    return _constant_pad(x, _pairs(x, paddings), constant_values[()], xp)


def _limit(mode):
    return 1 if mode == "REFLECT" else 0


@KERNELS.register("MirrorPad")
def _mirror_pad(x, paddings, *, mode, xp):
    return xp.pad(x, _pairs(x, paddings, _limit(mode), mode), mode=mode.lower())


@KERNELS.register("MirrorPadGrad")
def _mirror_pad_grad(grad, paddings, *, mode, xp):
    """Folds each axis in turn: the padded entries are added onto the entries they mirror."""
    pairs = _pairs(grad, paddings)
    shift = _limit(mode)
    out = grad
    for axis, (before, after) in enumerate(pairs):
        size = out.shape[axis] - before - after
        if size < 0 or max(before, after) > size - shift:
            raise ValueError(f"{mode} padding ({before}, {after}) is too large for dimension {axis} of the "
                             f"gradient of shape {list(grad.shape)}")

        def part(lo, hi, step=1):
            return (slice(None),) * axis + (slice(lo, hi, step),)
        middle = out[part(before, before + size)].copy()
        if before:
            middle[part(shift, shift + before)] += out[part(before - 1, None, -1)]
        if after:
            tail = out[part(before + size, None)]
            middle[part(size - shift - after, size - shift)] += tail[part(None, None, -1)]
        out = middle
    return out if out is not grad else grad.copy()


@KERNELS.register("Tile")
def _tile(x, multiples, *, xp):
    reps = [int(m) for m in multiples.reshape(-1).tolist()]
    if multiples.ndim != 1 or len(reps) != x.ndim:
        raise ValueError(f"multiples {multiples.tolist()} must have one entry per dimension of the input, "
                         f"whose shape is {list(x.shape)}")
    if any(m < 0 for m in reps):
        raise ValueError(f"multiples must be non-negative, got {reps}")
    return xp.tile(x, reps) if reps else x.copy()
