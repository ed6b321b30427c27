"""Turning serialized Examples and SequenceExamples into the parse ops' outputs: a dense array per dense key
(defaults, variable-length rows padded) and an (indices, values, dense_shape) triple per sparse key.

Error messages are TensorFlow's, word for word where a program or a test may look for them, with what was
found added where TF's own says little."""

import numpy as np
from google.protobuf.message import DecodeError

from tensorweave.extension import errors, example_protos

_KIND_TYPES = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_TYPE_NAMES = {"float32": "float", "int64": "int64", "string": "string"}
_NUMPY = {"float": np.float32, "int64": np.int64, "string": object}


def type_name(dtype):
    """TF's name of an Example value type in messages: float, int64 or string."""
    return _TYPE_NAMES[dtype.name]


def shape_text(dims):
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def feature_values(feature):
    """(value type, numpy values) of a Feature; (None, None) when no list is set at all."""
    kind = None if feature is None else feature.WhichOneof("kind")
    if kind is None:
        return None, None
    found, values = _KIND_TYPES[kind], getattr(feature, kind).value
    if found == "string":
        array = np.empty(len(values), dtype=object)
        array[:] = list(values)
        return found, array
    return found, np.array(values, dtype=_NUMPY[found])


def parse_proto(cls, data, message):
    try:
        return cls.FromString(bytes(data))
    except DecodeError:
        raise invalid(message) from None


class Spec:
    """One key to parse: its value type (float, int64, string), and for a dense key its shape (a first
    dimension None: rows of the rest, any number of them) and default (None or empty: required)."""

    def __init__(self, key, dtype, shape=None, default=None):
        self.key, self.type = key, type_name(dtype)
        self.numpy = _NUMPY[self.type]
        self.shape = None if shape is None else [d.value for d in shape.dims]
        self.variable = self.shape is not None and len(self.shape) > 0 and self.shape[0] is None
        self.row = None if self.shape is None else self.shape[1:] if self.variable else self.shape
        self.stride = None if self.row is None else int(np.prod(self.row, dtype=np.int64))
        self.default = None if default is None or np.size(default) == 0 else np.asarray(default)


class _Column:
    """What one key gathers over a batch: its values (int64 and bytes in one flat list; floats as the packed
    little-endian bytes of each FloatList, read by numpy at once), and per Example how many it had (-1: none,
    the default stands in)."""

    __slots__ = ("spec", "flat", "counts")

    def __init__(self, spec):
        self.spec, self.flat, self.counts = spec, [], []

    def add(self, values_list):
        """Adds one Example's list (a FloatList, Int64List or BytesList); returns how many values it held."""
        if self.spec.type != "float":
            values = values_list.value
            self.flat.extend(values)
            return len(values)
        packed = values_list.SerializeToString()  # field 1, packed: tag, varint length, 4 bytes a value
        if not packed:
            return 0
        start = 1
        while start < len(packed) and packed[start] & 0x80:
            start += 1
        self.flat.append(packed[start + 1:])
        return (len(packed) - start - 1) // 4

    def values(self):
        if self.spec.type == "float":
            return np.frombuffer(b"".join(self.flat), dtype="<f4").astype(np.float32)
        return as_array(self.flat, self.spec.numpy)


def as_array(flat, numpy_type):
    if numpy_type is object:
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out
    return np.array(flat, dtype=numpy_type)


class ExampleParser:
    """Parses a batch of Examples (``batch``: messages name each Example) or one (``batch=False``) into the
    sparse triples and dense arrays of ParseExample / ParseSingleExample. Values are gathered per key in
    flat lists and made arrays once per batch."""

    def __init__(self, sparse, dense, batch):
        self.sparse, self.dense, self.batch = sparse, dense, batch

    def _where(self, name, index, key):
        return f"Name: {name}, Key: {key}, Index: {index}.  " if self.batch else f"Key: {key}.  "

    def _type_error(self, spec, found, name, index):
        if spec.shape is None:
            return invalid(f"{self._where(name, index, spec.key)}Data types don't match. Expected type: "
                           f"{spec.type}, Actual type: {found}")
        return invalid(f"{self._where(name, index, spec.key)}Data types don't match. Data type: {found} but "
                       f"expected type: {spec.type}")

    def _missing(self, spec, name):
        """The count recorded for an Example without ``spec``'s key: 0 values, or -1 (its default)."""
        if spec.shape is None or spec.variable:
            return 0
        if spec.default is None:
            prefix = f"Name: {name}, " if self.batch else ""
            raise invalid(f"{prefix}Feature: {spec.key} (data type: {spec.type}) is required but could not be "
                          f"found.")
        return -1

    def _count_error(self, spec, n, name, index):
        if spec.variable:
            if not self.batch:
                return invalid(f"Error while parsing feature with key {spec.key}: number of elements should be "
                               f"divisible by {spec.stride}, found {n} instead")
            return invalid(f"{self._where(name, index, spec.key)}Number of {spec.type} values is not a multiple of "
                           f"stride length. Saw {n} values but output shape is: {shape_text(spec.shape)}")
        if not self.batch:
            kind = {"float": "float", "int64": "int64", "string": "bytes"}[spec.type]
            return invalid(f"Key: {spec.key}.  Can't parse serialized Example: Some {kind}_list slice was not "
                           f"parsed. ({n} values for shape {shape_text(spec.shape)})")
        return invalid(f"{self._where(name, index, spec.key)}Number of {spec.type} values != expected.  Values "
                       f"size: {n} but output shape: {shape_text(spec.shape)}")

    def parse(self, serialized, names):
        """(sparse triples, dense arrays) for ``serialized`` (a vector, or a scalar when not ``batch``)."""
        items = np.asarray(serialized, dtype=object).reshape(-1)
        names = np.asarray(names, dtype=object).reshape(-1)

        def name_of(index):
            name = names[index] if index < len(names) else b""
            name = name.decode() if isinstance(name, bytes) else str(name)
            return name or "<unknown>"

        columns = [_Column(spec) for spec in self.sparse + self.dense]
        from_string = example_protos.Example.FromString
        for index, data in enumerate(items):
            try:
                example = from_string(data if isinstance(data, bytes) else bytes(data))
            except DecodeError:
                text = bytes(data).decode("utf-8", "backslashreplace")
                raise invalid(f"Could not parse example input, value: '{text}'") from None
            features = example.features.feature
            for column in columns:
                spec = column.spec
                feature = features.get(spec.key)
                kind = None if feature is None else feature.WhichOneof("kind")
                if kind is None:
                    column.counts.append(self._missing(spec, name_of(index)))
                    continue
                if _KIND_TYPES[kind] != spec.type:
                    raise self._type_error(spec, _KIND_TYPES[kind], name_of(index), index)
                n = column.add(getattr(feature, kind))
                if spec.stride is not None and (n % spec.stride if spec.variable else n != spec.stride):
                    raise self._count_error(spec, n, name_of(index), index)
                column.counts.append(n)
        n_sparse = len(self.sparse)
        triples = [sparse_triple(c.values(), c.counts, self.batch) for c in columns[:n_sparse]]
        arrays = [dense_array(c.values(), c.counts, c.spec, self.batch) for c in columns[n_sparse:]]
        return triples, arrays


def sparse_triple(values, counts, batch):
    """(indices, values, dense_shape) of rows of ``counts`` values each (``values`` concatenated): indices
    (row, j) in a batch, (j,) for one row."""
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.cumsum(counts) - counts
    positions = np.arange(values.size, dtype=np.int64) - np.repeat(starts, counts)
    width = int(counts.max(initial=0))
    if not batch:
        return positions.reshape(-1, 1), values, np.array([width], dtype=np.int64)
    which = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    return np.stack([which, positions], axis=1), values, np.array([counts.size, width], dtype=np.int64)


def dense_array(values, counts, spec, batch):
    """The dense output of one key over the batch: missing values defaulted, variable-length rows padded."""
    counts = np.asarray(counts, dtype=np.int64)
    if spec.variable:
        rows = counts // spec.stride
        out = np.empty([counts.size, int(rows.max(initial=0)), spec.stride], dtype=spec.numpy)
        out[...] = spec.default if spec.default is not None else (b"" if spec.type == "string" else 0)
        which = np.repeat(np.arange(counts.size), rows)
        out[which, np.arange(which.size) - np.repeat(np.cumsum(rows) - rows, rows)] = \
            values.reshape(-1, spec.stride)
        out = out.reshape([counts.size, out.shape[1]] + spec.row)
    else:
        out = np.empty([counts.size] + spec.shape, dtype=spec.numpy)
        present = counts >= 0
        out[present] = values.reshape([-1] + spec.shape)
        if not present.all():
            out[~present] = spec.default.reshape(spec.shape)
    return out if batch else out[0]


def sparse_from_rows(rows, batch):
    """sparse_triple of a list of value arrays (one per row)."""
    values = np.concatenate(rows) if rows else np.zeros(0)
    return sparse_triple(values, [len(r) for r in rows], batch)


class SequenceParser:
    """Parses one SequenceExample: its context as a single Example, and each feature list into a
    [steps] + shape dense array or a [steps, values] sparse triple (ParseSingleSequenceExample)."""

    def __init__(self, context, lists, missing_ok):
        self.context = ExampleParser(*context, batch=False)
        self.sparse_lists, self.dense_lists = lists
        self.missing_ok = set(missing_ok)

    def parse(self, serialized, name):
        name = name or "<unknown>"
        example = parse_proto(example_protos.SequenceExample, serialized,
                              f"Invalid protocol message input, example id: {name}")
        context = example.context.feature
        sparse = [sparse_from_rows([self._context_sparse(spec, context.get(spec.key), name)], False)
                  for spec in self.context.sparse]
        dense = [self._context_dense(spec, context.get(spec.key), name) for spec in self.context.dense]
        lists = example.feature_lists.feature_list
        list_sparse = [_typed(sparse_from_rows(self._steps(spec, lists.get(spec.key), name), True), spec)
                       for spec in self.sparse_lists]
        list_dense = [self._dense_list(spec, lists.get(spec.key), name) for spec in self.dense_lists]
        return sparse, dense, list_sparse, list_dense

    @staticmethod
    def _context_type_error(spec, name):
        return invalid(f"Name: {name}, Context feature: {spec.key}.  Data types don't match. Expected type: "
                       f"{spec.type}")

    def _context_sparse(self, spec, feature, name):
        found, values = feature_values(feature)
        if found is None:
            return np.zeros(0, dtype=spec.numpy)
        if found != spec.type:
            raise self._context_type_error(spec, name)
        return values

    def _context_dense(self, spec, feature, name):
        found, values = feature_values(feature)
        if found is None and spec.default is not None:
            return spec.default
        if found is not None and found != spec.type:
            raise self._context_type_error(spec, name)
        count = 0 if found is None else values.size
        if count != spec.stride:
            missing = " (the context feature is required but could not be found)" if found is None else ""
            raise invalid(f"Inconsistent max number of elements for feature {spec.key}: expected {spec.stride}, "
                          f"but found {count}{missing}")
        return values.reshape(spec.shape)

    @staticmethod
    def _steps(spec, feature_list, name):
        """The values of each step of a feature list (none when it is missing), type-checked."""
        steps = [] if feature_list is None else feature_list.feature
        out = []
        for index, feature in enumerate(steps):
            found, values = feature_values(feature)
            if found is None:
                if spec.stride:
                    raise invalid(f"Name: {name}, Key: {spec.key}, Index: {index}.  Number of values != expected.  "
                                  f"values size: 0 but output shape: {shape_text(spec.shape)}")
                values = np.zeros(0, dtype=spec.numpy)
            elif found != spec.type:
                raise invalid(f"Name: {name}, Feature list: {spec.key}, Index: {index}.  Data types don't match. "
                              f"Expected type: {spec.type}")
            out.append(values)
        return out

    def _dense_list(self, spec, feature_list, name):
        if feature_list is None and spec.key not in self.missing_ok:
            raise invalid(f"Name: {name}, Feature list '{spec.key}' is required but could not be found.  Did you "
                          f"mean to include it in feature_list_dense_missing_assumed_empty or "
                          f"feature_list_dense_defaults?")
        steps = self._steps(spec, feature_list, name)
        if any(v.size != spec.stride for v in steps):
            total = sum(v.size for v in steps)
            raise invalid(f"Feature list '{spec.key}' has an unexpected number of values.  Total values size: "
                          f"{total} is not consistent with output shape: {shape_text([None] + spec.shape)}")
        out = np.empty([len(steps)] + spec.shape, dtype=spec.numpy)
        for i, v in enumerate(steps):
            out[i] = v.reshape(spec.shape)
        return out


def _typed(triple, spec):
    """A triple whose values have the spec's dtype (no rows at all concatenate to float64)."""
    return triple[0], triple[1].astype(spec.numpy, copy=False), triple[2]
