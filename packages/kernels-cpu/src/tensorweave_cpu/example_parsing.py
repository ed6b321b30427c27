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


class ExampleParser:
    """Parses a batch of Examples (``batch``: messages name each Example) or one (``batch=False``) into the
    sparse triples and dense arrays of ParseExample / ParseSingleExample."""

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

    def _dense_value(self, spec, feature, name, index):
        found, values = feature_values(feature)
        if found is None:
            if spec.variable:
                return np.zeros([0] + spec.row, dtype=spec.numpy)
            if spec.default is None:
                prefix = f"Name: {name}, " if self.batch else ""
                raise invalid(f"{prefix}Feature: {spec.key} (data type: {spec.type}) is required but could not be "
                              f"found.")
            return spec.default
        if found != spec.type:
            raise self._type_error(spec, found, name, index)
        if spec.variable:
            if values.size % spec.stride:
                if not self.batch:
                    raise invalid(f"Error while parsing feature with key {spec.key}: number of elements should be "
                                  f"divisible by {spec.stride}, found {values.size} instead")
                raise invalid(f"{self._where(name, index, spec.key)}Number of {spec.type} values is not a multiple "
                              f"of stride length. Saw {values.size} values but output shape is: "
                              f"{shape_text(spec.shape)}")
            return values.reshape([-1] + spec.row)
        if values.size != spec.stride:
            if not self.batch:
                kind = {"float": "float", "int64": "int64", "string": "bytes"}[spec.type]
                raise invalid(f"Key: {spec.key}.  Can't parse serialized Example: Some {kind}_list slice was not "
                              f"parsed. ({values.size} values for shape {shape_text(spec.shape)})")
            raise invalid(f"{self._where(name, index, spec.key)}Number of {spec.type} values != expected.  Values "
                          f"size: {values.size} but output shape: {shape_text(spec.shape)}")
        return values.reshape(spec.shape)

    def _sparse_value(self, spec, feature, name, index):
        found, values = feature_values(feature)
        if found is None:
            return np.zeros(0, dtype=spec.numpy)
        if found != spec.type:
            raise self._type_error(spec, found, name, index)
        return values

    def parse(self, serialized, names):
        """(sparse triples, dense arrays) for ``serialized`` (a vector, or a scalar when not ``batch``)."""
        items = np.asarray(serialized, dtype=object).reshape(-1)
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in np.asarray(names, dtype=object).reshape(-1)]
        sparse = [[] for _ in self.sparse]
        dense = [[] for _ in self.dense]
        for index, data in enumerate(items):
            name = names[index] if index < len(names) and names[index] else "<unknown>"
            text = bytes(data).decode("utf-8", "backslashreplace")
            example = parse_proto(example_protos.Example, data,
                                  f"Could not parse example input, value: '{text}'")
            features = example.features.feature
            for out, spec in zip(sparse, self.sparse):
                out.append(self._sparse_value(spec, features.get(spec.key), name, index))
            for out, spec in zip(dense, self.dense):
                out.append(self._dense_value(spec, features.get(spec.key), name, index))
        triples = [sparse_triple(values, self.batch, spec.numpy) for values, spec in zip(sparse, self.sparse)]
        arrays = [dense_array(values, spec, self.batch) for values, spec in zip(dense, self.dense)]
        return triples, arrays


def sparse_triple(rows, batch, numpy_type):
    """(indices, values, dense_shape) of per-row value vectors: indices (row, j) in a batch, (j,) for one row."""
    lengths = [len(r) for r in rows]
    width = max(lengths, default=0)
    values = np.concatenate(rows).astype(numpy_type, copy=False) if rows else np.zeros(0, dtype=numpy_type)
    positions = np.concatenate([np.arange(n, dtype=np.int64) for n in lengths]) if rows else np.zeros(0, np.int64)
    if not batch:
        return positions.reshape(-1, 1), values, np.array([width], dtype=np.int64)
    which = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    return (np.stack([which, positions], axis=1).reshape(-1, 2), values,
            np.array([len(rows), width], dtype=np.int64))


def dense_array(values, spec, batch):
    """The dense output of one key: values stacked over the batch, variable-length rows padded."""
    if spec.variable:
        longest = max((len(v) for v in values), default=0)
        out = np.empty([len(values), longest] + spec.row, dtype=spec.numpy)
        out[...] = spec.default if spec.default is not None else (b"" if spec.type == "string" else 0)
        for i, v in enumerate(values):
            out[i, :len(v)] = v
    else:
        out = np.empty([len(values)] + spec.shape, dtype=spec.numpy)
        for i, v in enumerate(values):
            out[i] = v
    return out if batch else out[0]


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
        sparse = [sparse_triple([self._context_sparse(spec, context.get(spec.key), name)], False, spec.numpy)
                  for spec in self.context.sparse]
        dense = [self._context_dense(spec, context.get(spec.key), name) for spec in self.context.dense]
        lists = example.feature_lists.feature_list
        list_sparse = [sparse_triple(self._steps(spec, lists.get(spec.key), name), True, spec.numpy)
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
