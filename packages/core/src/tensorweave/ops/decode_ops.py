"""Decoding strings into numbers, as input pipelines read records: DecodeRaw (bytes reinterpreted as a numeric
type: ``tf.decode_raw``) and DecodeCSV (one tensor per column of CSV lines: ``tf.decode_csv``)."""

from tensorweave import dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = ["decode_csv", "decode_raw"]

CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)

DECODE_RAW = DEFS.define(
    "DecodeRaw", inputs=["bytes: string"], outputs=["output: out_type"],
    attrs=["out_type: {float16, float32, float64, int32, uint16, uint8, int16, int8, int64, complex64, complex128, "
           "bool}", "little_endian: bool = True"],
    grad=NOT_DIFFERENTIABLE,
    doc="Each string's bytes as a vector of out_type (every string the same length, a multiple of the type's size).")
DECODE_CSV = DEFS.define(
    "DecodeCSV", inputs=["records: string", "record_defaults: OUT_TYPE"], outputs=["output: OUT_TYPE"],
    attrs=["OUT_TYPE: list({float32, float64, int32, int64, string}) >= 1", "field_delim: string = ','",
           "use_quote_delim: bool = True", "na_value: string = ''", "select_cols: list(int) = []"],
    grad=NOT_DIFFERENTIABLE,
    doc="Splits each CSV record into its fields, one output per column, each of the records' shape; an empty "
        "field takes its column's default (an empty default: the field is required).")


@DECODE_RAW.set_shape_fn
def _decode_raw_shape(op):
    return op.inputs[0].shape.concatenate([None])


@DECODE_CSV.set_shape_fn
def _decode_csv_shape(op):
    for default in op.inputs[1:]:
        shape = default.shape
        if shape.ndims is not None and shape.ndims > 1:
            raise ValueError(f"Shape must be at most rank 1 but is rank {shape.ndims}: a record default is a "
                             f"scalar or a vector of 0 or 1 values")
        if shape.ndims == 1 and shape.dims[0].value not in (None, 0, 1):
            raise ValueError("Shape of a default must be a length-0 or length-1 vector, or a scalar.")
    return [op.inputs[0].shape] * (len(op.inputs) - 1)


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """The bytes of each string as a vector of ``out_type``: shape ``input.shape + [length / itemsize]``."""
    if (input_bytes is None) == (bytes is None):
        raise ValueError("decode_raw takes input_bytes (or its old name, bytes), exactly once")
    if out_type is None:
        raise ValueError("decode_raw needs out_type, the dtype the bytes hold (e.g. tf.uint8, tf.float32)")
    out_type = dtypes.as_dtype(out_type)
    allowed = DECODE_RAW.attrs["out_type"].allowed
    if out_type not in allowed:
        raise TypeError(f"Value passed to parameter 'out_type' has DataType {out_type.name} not in list of allowed "
                        f"values: {', '.join(t.name for t in allowed)}")
    source = input_bytes if bytes is None else bytes
    return apply_op("DecodeRaw", [convert_to_tensor(source, dtype=dtypes.string)],
                    {"out_type": out_type, "little_endian": bool(little_endian)}, name=name or "DecodeRaw")


def _record_default(value, i):
    tensor = convert_to_tensor(value, name=f"record_defaults_{i}")
    if tensor.dtype not in CSV_TYPES:
        raise TypeError(f"Value passed to parameter 'record_defaults' has DataType {tensor.dtype.name} not in list "
                        f"of allowed values: float32, float64, int32, int64, string (record_defaults[{i}] = "
                        f"{value!r}; its dtype is the column's)")
    return tensor


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """Converts CSV records to tensors, one per column; ``record_defaults[i]`` gives column i's dtype and the
    value of an empty field (``[]``: the column is required). ``select_cols``: read only these columns."""
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if any(b <= a for a, b in zip(select_cols, select_cols[1:])):
            raise ValueError("select_cols is not strictly increasing.")
        if select_cols and select_cols[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    if not record_defaults:
        raise ValueError("Attr 'OUT_TYPE' of 'DecodeCSV' Op passed list of length 0 less than minimum 1. "
                         "record_defaults needs one default per column.")
    with name_scope(name, "DecodeCSV"):
        defaults = [_record_default(v, i) for i, v in enumerate(record_defaults)]
        return apply_op("DecodeCSV", [convert_to_tensor(records, dtype=dtypes.string, name="records"), defaults], {
            "field_delim": field_delim, "use_quote_delim": bool(use_quote_delim), "na_value": na_value,
            "select_cols": select_cols or []}, name="DecodeCSV")

