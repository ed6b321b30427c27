"""CPU kernels for the string ops: each string (bytes) handled in Python, the results as object arrays of bytes.
Regular expressions run on Python's re (RE2's syntax for the common cases); hashes are TF's own (string_hashes)."""

import re

import numpy as np

from tensorweave.extension import KernelSet, errors

from tensorweave_cpu import string_hashes

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: strings live on the host."""


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _map(fn, *arrays, otype=object):
    """``fn`` over the entries of the broadcast arrays, as an array of ``otype``."""
    arrays = np.broadcast_arrays(*arrays)
    out = np.empty(arrays[0].shape, dtype=otype)
    flat = out.reshape(-1)
    for i, entries in enumerate(zip(*(a.reshape(-1).tolist() for a in arrays))):
        flat[i] = fn(*entries)
    return out


def _bytes(value):
    return value.encode() if isinstance(value, str) else value


KERNELS.add("StringStrip", lambda x: _map(bytes.strip, x))
KERNELS.add("StringLower", lambda x, *, encoding: _map(
    (lambda s: s.decode().lower().encode()) if encoding.lower() in ("utf-8", "utf8") else bytes.lower, x))
KERNELS.add("StringUpper", lambda x, *, encoding: _map(
    (lambda s: s.decode().upper().encode()) if encoding.lower() in ("utf-8", "utf8") else bytes.upper, x))


@KERNELS.register("StringLength")
def _string_length(x, *, unit):
    count = len if unit == "BYTE" else (lambda s: len(s.decode("utf-8", errors="replace")))
    return _map(count, x, otype=np.int32)


@KERNELS.register("Substr")
def _substr(x, pos, length, *, unit):
    def take(s, p, n):
        text = s if unit == "BYTE" else s.decode("utf-8")
        size = len(text)
        if not -size <= p <= size:
            raise _invalid(f"Substr: pos {p} is out of range for string b'{s.decode('latin-1')}' of length {size}")
        if p < 0:
            p += size
        piece = text[p:p + max(n, 0)]
        return piece if unit == "BYTE" else piece.encode("utf-8")
    return _map(take, x, pos, length)


def _compile(pattern, op_type):
    try:
        return re.compile(_bytes(pattern))
    except re.error as e:
        raise _invalid(f"{op_type}: invalid pattern {pattern!r}: {e}") from None


def _full_match(x, pattern, op_type):
    regex = _compile(pattern, op_type)
    return _map(lambda s: regex.fullmatch(s) is not None, x, otype=bool)


KERNELS.add("RegexFullMatch", lambda x, pattern: _full_match(x, pattern.item(), "RegexFullMatch"))
KERNELS.add("StaticRegexFullMatch", lambda x, *, pattern: _full_match(x, pattern, "StaticRegexFullMatch"))


def _replace(x, pattern, rewrite, replace_global, op_type):
    regex = _compile(pattern, op_type)
    rewrite = _bytes(rewrite)
    return _map(lambda s: regex.sub(rewrite, s, count=0 if replace_global else 1), x)


KERNELS.add("RegexReplace", lambda x, pattern, rewrite, *, replace_global: _replace(
    x, pattern.item(), rewrite.item(), replace_global, "RegexReplace"))
KERNELS.add("StaticRegexReplace", lambda x, *, pattern, rewrite, replace_global: _replace(
    x, pattern, rewrite, replace_global, "StaticRegexReplace"))


@KERNELS.register("StringToNumber")
def _string_to_number(x, *, out_type):
    dtype = np.dtype(out_type.as_numpy_dtype)
    parse = float if dtype.kind == "f" else int

    def convert(s):
        try:
            value = parse(s.strip())
        except ValueError:
            raise _invalid(f"StringToNumberOp could not correctly convert string: {s.decode('latin-1')}") from None
        if dtype.kind == "i" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
            raise _invalid(f"StringToNumberOp could not correctly convert string: {s.decode('latin-1')}")
        return value
    return _map(convert, x, otype=dtype)


@KERNELS.register("AsString")
def _as_string(x, *, precision, scientific, shortest, width, fill):
    if fill and fill not in " 0":
        raise _invalid(f"AsString: fill must be ' ', '0' or empty, got {fill!r}")
    flags = (fill or "") + (str(width) if width > -1 else "")
    kind = x.dtype.kind
    if kind == "b":
        return _map(lambda v: (f"%{flags}s" % ("true" if v else "false")).encode(), x)
    if kind in "iu":
        return _map(lambda v: (f"%{flags}d" % v).encode(), x)
    spec = f"%{flags}" + (f".{precision}" if precision > -1 else "") + ("e" if scientific else "g" if shortest
                                                                          else "f")
    if kind == "c":
        return _map(lambda v: f"({spec % v.real},{spec % v.imag})".encode(), x)
    return _map(lambda v: (spec % v).encode(), x.astype(np.float64))


def _buckets(hash_fn, num_buckets):
    return lambda x: _map(lambda s: hash_fn(s) % num_buckets, x, otype=np.int64)


KERNELS.add("StringToHashBucketFast", build=lambda node: _buckets(string_hashes.fingerprint64,
                                                                   node.attrs["num_buckets"]))
KERNELS.add("StringToHashBucket", build=lambda node: _buckets(string_hashes.hash64, node.attrs["num_buckets"]))


@KERNELS.register_build("StringToHashBucketStrong")
def _to_hash_bucket_strong(node):
    key = node.attrs["key"]
    if len(key) != 2:
        raise _invalid(f"StringToHashBucketStrong: key must have 2 elements, got {list(key)}")
    k0, k1 = (int(k) & ((1 << 64) - 1) for k in key)
    return _buckets(lambda s: string_hashes.siphash24(k0, k1, s), node.attrs["num_buckets"])


@KERNELS.register("ReduceJoin")
def _reduce_join(inputs, reduction_indices, *, keep_dims, separator):
    rank = inputs.ndim
    axes = [int(a) for a in reduction_indices.reshape(-1)]
    for a in axes:
        if not -rank <= a < rank:
            raise _invalid(f"ReduceJoin: invalid reduction dimension {a} for an input of rank {rank}")
    axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes):
        raise _invalid(f"ReduceJoin: duplicate reduction dimension in {reduction_indices.tolist()}")
    kept = [a for a in range(rank) if a not in axes]
    moved = np.transpose(inputs, kept + axes[::-1])  # the first axis given varies fastest
    rows = moved.reshape(moved.shape[:len(kept)] + (-1,))
    separator = _bytes(separator)
    out = np.empty(rows.shape[:-1], dtype=object)
    flat, source = out.reshape(-1), rows.reshape(-1, rows.shape[-1])
    for i, row in enumerate(source.tolist()):
        flat[i] = separator.join(row)
    if keep_dims:
        out = out.reshape([1 if a in axes else inputs.shape[a] for a in range(rank)])
    return out


def _split_v2(text, sep, maxsplit):
    """TF's SplitV2: at whitespace runs when sep is empty (the rest after maxsplit tokens, even empty, is one more
    token), else at each sep (empty tokens kept; an empty string is one empty token)."""
    if maxsplit == 0:
        return [text]
    if sep:
        return text.split(sep, maxsplit if maxsplit > 0 else -1)
    tokens = []
    rest = text.lstrip()
    while rest:
        parts = rest.split(None, 1)  # the remainder comes without its leading whitespace
        tokens.append(parts[0])
        rest = parts[1] if len(parts) > 1 else b""
        if maxsplit > 0 and len(tokens) == maxsplit:
            tokens.append(rest)
            break
    return tokens


@KERNELS.register("StringSplitV2")
def _string_split_v2(source, sep, *, maxsplit):
    sep = sep.item() if isinstance(sep, np.ndarray) else sep
    if source.ndim != 1:
        raise _invalid(f"StringSplitV2: input must be a vector, got shape {list(source.shape)}")
    rows, columns, tokens = [], [], []
    for row, text in enumerate(source.tolist()):
        parts = _split_v2(text, sep, maxsplit)
        rows.extend([row] * len(parts))
        columns.extend(range(len(parts)))
        tokens.extend(parts)
    values = np.empty(len(tokens), dtype=object)
    values[:] = tokens
    width = max(columns, default=-1) + 1
    return np.array([rows, columns], np.int64).T.reshape(-1, 2), values, np.array([len(source), width], np.int64)
