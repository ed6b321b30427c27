"""String ops (``tf.strings`` of TF 1.15 and the old top-level names): split, strip, length, case, substr,
regular expressions, number conversion both ways, hash buckets with TF's exact hashes, and reduce_join. Strings
are bytes; none of these ops is differentiable."""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import range_ops, reduction_ops, shape_ops
from tensorweave.ops.io_ops import string_join  # StringJoin is defined with the saver's ops, which use it

DEFS = OpDefList()

__all__ = ["substr", "regex_replace", "string_to_number", "string_to_hash_bucket_fast",
           "string_to_hash_bucket_strong", "string_to_hash_bucket", "as_string", "reduce_join", "string_strip"]
STRINGS = ["join", "split", "strip", "length", "lower", "upper", "substr", "regex_full_match", "regex_replace",
           "to_number", "to_hash_bucket", "to_hash_bucket_fast", "to_hash_bucket_strong", "reduce_join",
           "as_string"]


def _define(op_type, inputs, outputs, attrs=(), shape_fn=common_shapes.unchanged_shape, doc=""):
    return DEFS.define(op_type, inputs=inputs, outputs=outputs, attrs=list(attrs), shape_fn=shape_fn,
                       grad=NOT_DIFFERENTIABLE, doc=doc)


def _broadcast_all(op):
    shape = tensor_shape.TensorShape([])
    for t in op.inputs:
        shape = common_shapes.broadcast_shapes(shape, t.shape)
    return shape


_define("StringStrip", ["input: string"], ["output: string"], doc="Leading and trailing whitespace removed.")
_define("StringLength", ["input: string"], ["output: int32"], ["unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"],
        doc="The length of each string in bytes or in UTF-8 characters.")
_define("StringLower", ["input: string"], ["output: string"], ["encoding: string = ''"],
        doc="ASCII letters (all letters with encoding 'utf-8') in lower case.")
_define("StringUpper", ["input: string"], ["output: string"], ["encoding: string = ''"],
        doc="ASCII letters (all letters with encoding 'utf-8') in upper case.")
_define("Substr", ["input: string", "pos: T", "len: T"], ["output: string"],
        ["T: {int32, int64}", "unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"], _broadcast_all,
        "len units of each string from pos (negative pos counts from the end); pos past the end is an error.")
_define("RegexFullMatch", ["input: string", "pattern: string"], ["output: bool"],
        doc="Whether the whole string matches the regular expression.")
_define("StaticRegexFullMatch", ["input: string"], ["output: bool"], ["pattern: string"],
        doc="Whether the whole string matches the regular expression (pattern as an attr).")
_define("RegexReplace", ["input: string", "pattern: string", "rewrite: string"], ["output: string"],
        ["replace_global: bool = True"], doc="Matches of pattern replaced by rewrite (\\1 for groups).")
_define("StaticRegexReplace", ["input: string"], ["output: string"],
        ["pattern: string", "rewrite: string", "replace_global: bool = True"],
        doc="Matches of pattern replaced by rewrite (pattern and rewrite as attrs).")
_define("StringToNumber", ["string_tensor: string"], ["output: out_type"],
        ["out_type: {float32, float64, int32, int64} = float32"],
        doc="Each string parsed as a number; a string that is not one is an error.")
_define("AsString", ["input: T"], ["output: string"],
        ["T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, complex64, "
         "complex128, bool}", "precision: int = -1", "scientific: bool = False", "shortest: bool = False",
         "width: int = -1", "fill: string = ''"], doc="Each entry formatted as a string, as C's printf would.")
_define("StringToHashBucketFast", ["input: string"], ["output: int64"], ["num_buckets: int >= 1"],
        doc="Fingerprint64 (farmhash) of each string modulo num_buckets.")
_define("StringToHashBucketStrong", ["input: string"], ["output: int64"],
        ["num_buckets: int >= 1", "key: list(int)"], doc="SipHash-2-4 keyed by key of each string modulo num_buckets.")
_define("StringToHashBucket", ["string_tensor: string"], ["output: int64"], ["num_buckets: int >= 1"],
        doc="TF's Hash64 of each string modulo num_buckets (deprecated in TF for the _fast form).")


_define("ReduceJoin", ["inputs: string", "reduction_indices: int32"], ["output: string"],
        ["keep_dims: bool = False", "separator: string = ''"], reduction_ops.reduction_shape,
        "Strings joined across the given axes, in the order given (the first varies fastest).")


_define("StringSplitV2", ["input: string", "sep: string"], ["indices: int64", "values: string", "shape: int64"],
        ["maxsplit: int = -1"], lambda op: [tensor_shape.TensorShape([None, 2]), tensor_shape.TensorShape([None]),
                                            tensor_shape.TensorShape([2])],
        "Each string of a vector split at sep (at runs of whitespace when sep is empty), at most maxsplit times.")


# ---- wrappers ----------------------------------------------------------------------------------------------------
def _string(t, name="input"):
    return convert_to_tensor(t, dtype=dtypes.string, name=name)


def string_strip(input, name=None):  # noqa: A002 - TF's argument names, here and below
    return apply_op("StringStrip", [_string(input)], name=name or "StringStrip")


def length(input, name=None, unit="BYTE"):  # noqa: A002
    return apply_op("StringLength", [_string(input)], {"unit": unit}, name=name or "StringLength")


def lower(input, encoding="", name=None):  # noqa: A002
    return apply_op("StringLower", [_string(input)], {"encoding": encoding}, name=name or "StringLower")


def upper(input, encoding="", name=None):  # noqa: A002
    return apply_op("StringUpper", [_string(input)], {"encoding": encoding}, name=name or "StringUpper")


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002
    """``len`` bytes (or UTF-8 characters) of each string from ``pos``; pos and len broadcast with input."""
    pos = convert_to_tensor(pos, name="pos")
    return apply_op("Substr", [_string(input), pos, convert_to_tensor(len, dtype=pos.dtype, name="len")],
                    {"unit": unit}, name=name or "Substr")


def _is_python_string(value):
    return isinstance(value, (str, bytes))


def regex_full_match(input, pattern, name=None):  # noqa: A002
    """Whether each string matches ``pattern`` as a whole (RE2 syntax; Python's re here)."""
    if _is_python_string(pattern):
        return apply_op("StaticRegexFullMatch", [_string(input)], {"pattern": pattern},
                        name=name or "StaticRegexFullMatch")
    return apply_op("RegexFullMatch", [_string(input), _string(pattern, "pattern")], name=name or "RegexFullMatch")


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Matches of ``pattern`` replaced by ``rewrite`` (``\\1`` names a group), all of them or the first."""
    if _is_python_string(pattern) and _is_python_string(rewrite):
        return apply_op("StaticRegexReplace", [_string(input)],
                        {"pattern": pattern, "rewrite": rewrite, "replace_global": bool(replace_global)},
                        name=name or "StaticRegexReplace")
    return apply_op("RegexReplace", [_string(input), _string(pattern, "pattern"), _string(rewrite, "rewrite")],
                    {"replace_global": bool(replace_global)}, name=name or "RegexReplace")


def string_to_number(string_tensor, out_type=dtypes.float32, name=None):
    return apply_op("StringToNumber", [_string(string_tensor, "string_tensor")],
                    {"out_type": dtypes.as_dtype(out_type)}, name=name or "StringToNumber")


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """Each entry as a string: floats as printf's %f (or %e / %g), integers as %d, bools as true/false."""
    attrs = {"precision": int(precision), "scientific": bool(scientific), "shortest": bool(shortest),
             "width": int(width), "fill": fill}
    return apply_op("AsString", [input], attrs, name=name or "AsString")


def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    return apply_op("StringToHashBucketFast", [_string(input)], {"num_buckets": int(num_buckets)},
                    name=name or "StringToHashBucketFast")


def string_to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    return apply_op("StringToHashBucketStrong", [_string(input)],
                    {"num_buckets": int(num_buckets), "key": [int(k) for k in key]},
                    name=name or "StringToHashBucketStrong")


def string_to_hash_bucket(string_tensor, num_buckets, name=None):
    return apply_op("StringToHashBucket", [_string(string_tensor, "string_tensor")],
                    {"num_buckets": int(num_buckets)}, name=name or "StringToHashBucket")


def reduce_join(inputs, axis=None, keep_dims=False, separator="", name=None, reduction_indices=None, keepdims=None):
    """Strings joined with ``separator`` across ``axis`` (all axes when None, the last first, as TF 1.15)."""
    axis = reduction_indices if axis is None else axis
    keep_dims = keep_dims if keepdims is None else keepdims
    inputs = _string(inputs, "inputs")
    if axis is None:
        rank = inputs.shape.ndims
        axis = list(range(rank - 1, -1, -1)) if rank is not None else range_ops.range(
            shape_ops.rank(inputs) - 1, -1, -1)
    return apply_op("ReduceJoin", [inputs, axis], {"keep_dims": bool(keep_dims), "separator": separator},
                    name=name or "ReduceJoin")


def split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor", source=None, name=None):  # noqa: A002
    """Each string of the vector ``input`` split at ``sep`` (at whitespace when None), as a SparseTensor
    [len(input), most tokens] (TF 1.15's tf.strings.split; RaggedTensor results do not exist here)."""
    if result_type != "SparseTensor":
        raise ValueError(f"strings.split: result_type {result_type!r} is not supported; use 'SparseTensor'")
    with graph_mod.name_scope(name, "StringSplit", [input]):
        source = _string(input if source is None else source)
        sep = _string(sep or "", "sep")
        indices, values, shape = apply_op("StringSplitV2", [source, sep], {"maxsplit": int(maxsplit)},
                                          name="StringSplitV2")
        return SparseTensor(indices, values, shape)


join, strip, to_number = string_join, string_strip, string_to_number
to_hash_bucket, to_hash_bucket_fast, to_hash_bucket_strong = (string_to_hash_bucket, string_to_hash_bucket_fast,
                                                              string_to_hash_bucket_strong)
