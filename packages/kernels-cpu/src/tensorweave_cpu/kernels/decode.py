"""CPU kernels of DecodeRaw (bytes reinterpreted as numbers) and DecodeCSV (CSV records split into columns),
with TensorFlow's rules: RFC 4180 quoting, empty or NA fields taking the column's default, numbers parsed as
strtol/strtod do (surrounding spaces allowed, nothing else)."""

import re

import numpy as np

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")

_TF_TYPE_NAMES = {"float16": "half", "float32": "float", "float64": "double"}
_INTEGER = re.compile(rb"[ \t\n\v\f\r]*[+-]?[0-9]+[ \t\n\v\f\r]*")


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _type_name(dtype):
    return _TF_TYPE_NAMES.get(dtype.name, dtype.name)


@KERNELS.register("DecodeRaw")
def _decode_raw(data, *, out_type, little_endian):
    items = np.asarray(data, dtype=object)
    flat = [bytes(b) for b in items.reshape(-1)]
    dtype = np.dtype(out_type.as_numpy_dtype)
    size = len(flat[0]) if flat else 0
    if size % dtype.itemsize:
        raise _invalid(f"Input to DecodeRaw has length {size} that is not a multiple of {dtype.itemsize}, the size "
                       f"of {_type_name(out_type)}")
    for i, b in enumerate(flat):
        if len(b) != size:
            raise _invalid(f"DecodeRaw requires input strings to all be the same size, but element {i} has size "
                           f"{size} != {len(b)}")
    wire = dtype.newbyteorder("<" if little_endian else ">")
    out = np.frombuffer(b"".join(flat), dtype=wire).reshape(items.shape + (size // dtype.itemsize,))
    return out.astype(dtype)


def split_fields(record, delim, quoting, select):
    """The fields of one CSV record (only the ``select``ed columns, when given), unquoted: TF's rules."""
    fields, pos, parsed, chosen, n = [], 0, 0, 0, len(record)
    while pos < n:
        include = select is None or select[chosen] == parsed
        if not quoting or record[pos] != 34:  # 34: '"'
            end = record.find(delim, pos)
            end = n if end < 0 else end
            field = record[pos:end]
            if (quoting and b'"' in field) or b"\n" in field or b"\r" in field:
                raise _invalid("Unquoted fields cannot have quotes/CRLFs inside")
            pos = end + 1
        else:
            pos += 1
            parts = []
            while pos < n - 1 and (record[pos] != 34 or record[pos + 1] != delim[0]):
                if record[pos] != 34:
                    parts.append(record[pos:pos + 1])
                    pos += 1
                elif record[pos + 1] == 34:
                    parts.append(b'"')
                    pos += 2
                else:
                    raise _invalid("Quote inside a string has to be escaped by another quote")
            if not (pos < n and record[pos] == 34 and (pos == n - 1 or record[pos + 1] == delim[0])):
                raise _invalid("Quoted field has to end with quote followed by delim or end")
            field = b"".join(parts)
            pos += 2
        parsed += 1
        if include:
            fields.append(field)
            chosen += 1
            if select is not None and chosen == len(select):
                return fields
    if n and record[n - 1] == delim[0] and (select is None or select[chosen] == parsed):
        fields.append(b"")
    return fields


def _number(text, dtype):
    """``text`` as a ``dtype`` number, or None if TF would not read it as one."""
    if dtype.kind == "O":
        return text
    if dtype.kind == "i":
        if not _INTEGER.fullmatch(text):
            return None
        value = int(text)
        info = np.iinfo(dtype)
        return value if info.min <= value <= info.max else None
    stripped = text.strip(b" \t\n\v\f\r")
    if not stripped or b"_" in stripped or not stripped.isascii():
        return None
    try:
        return float(stripped)
    except ValueError:
        try:
            return float.fromhex(stripped.decode())
        except ValueError:
            return None


@KERNELS.register("DecodeCSV")
def _decode_csv(records, *defaults, OUT_TYPE, field_delim, use_quote_delim, na_value, select_cols):  # noqa: N803
    if len(field_delim.encode()) != 1:
        raise _invalid("field_delim should be only 1 char")
    delim, na = field_delim.encode(), na_value.encode()
    items = np.asarray(records, dtype=object)
    columns = [[] for _ in OUT_TYPE]
    fallback = [np.asarray(d).reshape(-1) for d in defaults]
    for i, record in enumerate(items.reshape(-1)):
        record = record if isinstance(record, bytes) else str(record).encode()
        fields = split_fields(record, delim, use_quote_delim, select_cols or None)
        if len(fields) != len(OUT_TYPE):
            raise _invalid(f"Expect {len(OUT_TYPE)} fields but have {len(fields)} in record {i}")
        for f, (field, dtype, column) in enumerate(zip(fields, OUT_TYPE, columns)):
            if not field or field == na:
                if not fallback[f].size:
                    raise _invalid(f"Field {f} is required but missing in record {i}!")
                column.append(fallback[f][0])
                continue
            value = _number(field, np.dtype(dtype.as_numpy_dtype))
            if value is None:
                raise _invalid(f"Field {f} in record {i} is not a valid {_type_name(dtype)}: "
                               f"{field.decode('utf-8', 'backslashreplace')}")
            column.append(value)
    out = []
    for dtype, column in zip(OUT_TYPE, columns):
        numpy_type = np.dtype(dtype.as_numpy_dtype)
        array = np.empty(len(column), dtype=object) if numpy_type.kind == "O" else None
        if array is not None:
            array[:] = column
        else:
            with np.errstate(over="ignore"):
                array = np.array(column, dtype=np.float64 if numpy_type.kind == "f" else np.int64).astype(numpy_type)
        out.append(array.reshape(items.shape))
    return out
