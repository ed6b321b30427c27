"""How tensor values sit in a checkpoint: TF's shape_and_slice strings (which part of a variable a value is),
and the encodings of the dtypes safetensors has no code for (strings, complex numbers)."""

import numpy as np

from tensorweave import dtypes, errors

# ---- slices --------------------------------------------------------------------------------------
def parse_shape_and_slice(spec):
    """TF's "dim0 dim1 ... start,length:-:..." → (full shape, [(start, length) per dim]); '' → (None, None)."""
    spec = spec.decode() if isinstance(spec, bytes) else str(spec)
    if not spec.strip():
        return None, None
    parts = spec.split()
    try:
        shape = [int(d) for d in parts[:-1]]
        extents = []
        for dim, text in zip(shape, parts[-1].split(":")):
            if text == "-":
                extents.append((0, dim))
            else:
                start, length = (int(v) for v in text.split(","))
                if start < 0 or length < 0 or start + length > dim:
                    raise ValueError
                extents.append((start, length))
    except ValueError:
        raise errors.InvalidArgumentError(None, None, (
            f"bad shape_and_slice {spec!r}: expected full dims then 'start,length' or '-' per dim, "
            f"e.g. '10 5 0,4:-'")) from None
    if len(extents) != len(shape):
        raise errors.InvalidArgumentError(None, None, f"shape_and_slice {spec!r} has {len(shape)} dims but "
                                                      f"{len(extents)} slice entries")
    return shape, extents


def index_of(extents):
    return tuple(slice(s, s + n) for s, n in extents)


# ---- encoding the dtypes safetensors has no code for ----------------------------------------------
def encode(array, dtype):
    """(array safetensors can store, encoding name, extra index fields)."""
    if dtype is dtypes.string:
        items = [v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1)]
        return np.frombuffer(b"".join(items), np.uint8).copy(), "bytes", {"lengths": [len(v) for v in items]}
    if dtype.is_complex:
        return np.ascontiguousarray(array).view(array.real.dtype).reshape(array.shape + (2,)), "complex", {}
    if dtype is dtypes.bfloat16:  # safetensors' numpy side cannot read its own BF16 back: store the bits
        return np.ascontiguousarray(array).view(np.uint16), "bfloat16", {}
    return np.ascontiguousarray(array), "raw", {}


def decode(stored, entry, shape):
    encoding = entry["encoding"]
    if encoding == "bytes":
        data, out, pos = stored.tobytes(), [], 0
        for n in entry["lengths"]:
            out.append(data[pos:pos + n])
            pos += n
        strings = np.empty(len(out), dtype=object)
        strings[:] = out
        return strings.reshape(shape)
    if encoding == "complex":
        return np.ascontiguousarray(stored).view(np.complex64 if stored.dtype == np.float32 else np.complex128
                                                 ).reshape(shape)
    if encoding == "bfloat16":
        return np.array(stored, copy=True).view(dtypes.bfloat16.as_numpy_dtype).reshape(shape)
    return np.array(stored, copy=True).reshape(shape)
