"""Reduction operators and 16-bit compression of what travels.

A collective's values travel in a *wire* dtype: the tensor's own, or float16/bfloat16 for floating tensors
when compression is on (bfloat16 as the top 16 bits of a float32, rounded to nearest even, kept in uint16;
it is reduced by widening to float32). ``reducer`` gives the in-place ``combine(into, other)`` of an op
for a wire dtype; ``mpi_op`` gives MPI's own operator when MPI can reduce that dtype itself.
"""

import numpy as np

OPS = ("sum", "mean", "max", "min")
BFLOAT16_WIRE = np.dtype(np.uint16)


class Compression:
    """Horovod's names: ``Compression.none``, ``Compression.fp16`` and ``Compression.bf16`` compress the
    floating tensors a collective carries to 16 bits (halving the bytes) and restore their dtype after."""

    class _Kind:
        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return f"Compression.{self.name}"

    none = _Kind("none")
    fp16 = _Kind("float16")
    bf16 = _Kind("bfloat16")


def compression_name(compression):
    """``Compression.fp16``, ``"fp16"``, ``"float16"``, None... -> one of none, float16, bfloat16."""
    if compression is None:
        return "none"
    name = getattr(compression, "name", compression)
    name = {"fp16": "float16", "half": "float16", "bf16": "bfloat16", "": "none"}.get(name, name)
    if name not in ("none", "float16", "bfloat16"):
        raise ValueError(f"unknown compression {compression!r}; use Compression.none, Compression.fp16 or "
                         f"Compression.bf16")
    return name


def wire_dtype(dtype, compression):
    dtype = np.dtype(dtype)
    if compression == "none" or dtype.kind != "f" or dtype.itemsize <= 2:
        return dtype
    return np.dtype(np.float16) if compression == "float16" else BFLOAT16_WIRE


def to_wire(source, into, compression):
    """Writes ``source`` (any shape) into the 1-D ``into`` of the wire dtype."""
    flat = source.reshape(-1)
    if into.dtype == BFLOAT16_WIRE and flat.dtype.kind == "f":
        into[:] = _round_to_bf16(flat)
    else:
        np.copyto(into, flat, casting="unsafe")


def from_wire(wire, dtype, compression):
    """The 1-D values of ``wire`` in ``dtype`` (``wire`` itself when nothing was compressed)."""
    dtype = np.dtype(dtype)
    if wire.dtype == dtype:
        return wire
    if wire.dtype == BFLOAT16_WIRE and dtype.kind == "f":
        return (wire.astype(np.uint32) << 16).view(np.float32).astype(dtype, copy=False)
    return wire.astype(dtype)


def _bf16_combine(ufunc):
    def combine(into, other):
        a = (into.astype(np.uint32) << 16).view(np.float32)
        b = (other.astype(np.uint32) << 16).view(np.float32)
        ufunc(a, b, out=a)
        into[:] = _round_to_bf16(a)
    return combine


def _round_to_bf16(values):
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


_UFUNCS = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}


def reducer(op, wire, compression="none"):
    """``combine(into, other)``: ``into`` op= ``other``, elementwise and in place."""
    ufunc = _UFUNCS[op]
    if compression == "bfloat16" and np.dtype(wire) == BFLOAT16_WIRE:
        return _bf16_combine(ufunc)
    if np.dtype(wire).kind == "b":
        ufunc = np.logical_and if op == "min" else np.logical_or
    return lambda into, other: ufunc(into, other, out=into)


def mpi_op(op, wire, compression="none"):
    """MPI's operator for ``op`` on ``wire``, or None when MPI cannot reduce it (bfloat16 on the wire)."""
    from mpi4py import MPI
    wire = np.dtype(wire)
    if compression == "bfloat16" and wire == BFLOAT16_WIRE:
        return None
    if wire.kind == "b":
        return MPI.LAND if op == "min" else MPI.LOR
    if wire.kind == "c" and op in ("max", "min"):
        return None
    return {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]


def finish_mean(values, size):
    """Divides the sum by the number of ranks, in place (floor division for integers)."""
    if values.dtype.kind in "iu":
        np.floor_divide(values, size, out=values)
    else:
        np.divide(values, size, out=values, casting="unsafe")


def check_op(op, dtype):
    """Raises ValueError when ``op`` makes no sense for ``dtype`` (said at graph-building time)."""
    dtype = np.dtype(dtype)
    if op not in OPS:
        raise ValueError(f"unknown reduction {op!r}; use one of {', '.join(OPS)}")
    if dtype.kind == "c" and op in ("max", "min"):
        raise ValueError(f"{op} is not defined for complex tensors ({dtype.name})")
    if dtype.kind == "b" and op == "mean":
        raise ValueError("mean is not defined for bool tensors; cast them to a number first")
    if dtype.kind not in "biufc":
        raise ValueError(f"collectives carry numeric and bool tensors, not {dtype.name}")
