"""CPU kernels for lookup tables: a table is a dict in a resource of the device's container (private to the
session unless shared_name is given, as TF's), made by HashTableV2/MutableHashTableV2 and used by the others."""

import threading

import numpy as np

from tensorweave.extension import KernelSet, Resource, errors

from tensorweave_cpu.shared_resources import find_or_make

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: tables live on the host."""


class LookupTable(Resource):
    """keys -> values; an immutable table takes one initialization, before which lookups fail."""

    def __init__(self, name, key_dtype, value_dtype, mutable):
        self.name, self.mutable, self.initialized = name, mutable, mutable
        self.key_dtype, self.value_dtype = np.dtype(key_dtype), np.dtype(value_dtype)
        self.data = {}
        self.lock = threading.Lock()

    def debug_string(self):
        return f"LookupTable({self.name}: {self.key_dtype} -> {self.value_dtype}, {len(self.data)} keys)"

    def initialize(self, keys, values, where):
        """Fills the table once (a second initialization leaves it, as TF's); a key with two values is an error."""
        with self.lock:
            if self.initialized:
                return
            data = {}
            for key, value in zip(keys, values):
                old = data.setdefault(key, value)
                if old != value:
                    raise errors.FailedPreconditionError(None, None, (
                        f"{where}: HashTable has different value for same key. Key {key!r} has {old!r} and trying "
                        f"to add value {value!r}"))
            self.data, self.initialized = data, True

    def find(self, keys, default, where):
        if not self.initialized:
            raise errors.FailedPreconditionError(None, None, f"{where}: Table not initialized; run "
                                                 f"tf.tables_initializer() (or the table's initializer) first")
        if default.ndim:
            raise errors.InvalidArgumentError(None, None, f"{where}: default_value must be a scalar here, got shape "
                                              f"{list(default.shape)}")
        default = default.item() if default.dtype != object else default.reshape(()).tolist()
        with self.lock:
            get = self.data.get
            found = [get(k, default) for k in keys.reshape(-1).tolist()]
        out = np.empty(len(found), dtype=self.value_dtype)
        out[:] = found
        return out.reshape(keys.shape)


def _table(handle):
    table = getattr(handle, "resource", None)
    if not isinstance(table, LookupTable):
        raise errors.InvalidArgumentError(None, None, f"expected a lookup table handle, got {handle!r}")
    return table


def _creator(mutable):
    def build(node):
        key_dtype = node.attrs["key_dtype"].as_numpy_dtype
        value_dtype = node.attrs["value_dtype"].as_numpy_dtype

        def create(ctx):
            handle = find_or_make(ctx, node, lambda name: LookupTable(name, key_dtype, value_dtype, mutable))
            _table(handle)
            return handle
        return create
    return build


KERNELS.add("HashTableV2", build=_creator(False), context=True)
KERNELS.add("MutableHashTableV2", build=_creator(True), context=True)


@KERNELS.register("InitializeTableV2")
def _initialize(handle, keys, values):
    if keys.shape != values.shape or keys.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"InitializeTableV2: keys and values must be vectors of one "
                                          f"length, got shapes {list(keys.shape)} and {list(values.shape)}")
    _table(handle).initialize(keys.tolist(), values.tolist(), "InitializeTableV2")


def _text_column(line, number, index, delimiter, dtype, path):
    if index == -2:
        field = line
    elif index == -1:
        return number
    else:
        columns = line.split(delimiter) if delimiter else line.split()
        if index >= len(columns):
            raise errors.InvalidArgumentError(None, None, f"Invalid number of columns in {path} line {number} "
                                              f"({line!r}): expected more than {index} columns")
        field = columns[index]
    if dtype.kind in "OS":
        return field
    try:
        return (int if dtype.kind in "iu" else float)(field)
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"Field {field!r} in {path} line {number} is not a valid "
                                          f"{dtype}") from None


@KERNELS.register("InitializeTableFromTextFileV2")
def _initialize_from_text_file(handle, filename, *, key_index, value_index, vocab_size, delimiter):
    table = _table(handle)
    path = filename.item().decode() if isinstance(filename, np.ndarray) else filename.decode()
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
    except OSError as e:
        raise errors.NotFoundError(None, None, f"InitializeTableFromTextFileV2: cannot read {path}: {e}") from None
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    if vocab_size > -1:
        if len(lines) < vocab_size:
            raise errors.InvalidArgumentError(None, None, f"Invalid vocab_size in {path}: expected {vocab_size} "
                                              f"lines but the file has {len(lines)}")
        lines = lines[:vocab_size]
    delimiter = delimiter.encode()
    keys = [_text_column(line, i, key_index, delimiter, table.key_dtype, path) for i, line in enumerate(lines)]
    values = [_text_column(line, i, value_index, delimiter, table.value_dtype, path) for i, line in enumerate(lines)]
    table.initialize(keys, values, f"InitializeTableFromTextFileV2 ({path})")


@KERNELS.register("LookupTableFindV2")
def _find(handle, keys, default_value):
    return _table(handle).find(keys, default_value, "LookupTableFindV2")


@KERNELS.register("LookupTableInsertV2")
def _insert(handle, keys, values):
    if keys.shape != values.shape:
        raise errors.InvalidArgumentError(None, None, f"LookupTableInsertV2: keys and values must have one shape, got "
                                          f"{list(keys.shape)} and {list(values.shape)}")
    table = _table(handle)
    with table.lock:
        table.data.update(zip(keys.reshape(-1).tolist(), values.reshape(-1).tolist()))


@KERNELS.register("LookupTableSizeV2")
def _size(handle):
    table = _table(handle)
    with table.lock:
        return np.array(len(table.data), np.int64)


@KERNELS.register("LookupTableExportV2")
def _export(handle):
    table = _table(handle)
    with table.lock:
        items = list(table.data.items())
    keys = np.empty(len(items), table.key_dtype)
    values = np.empty(len(items), table.value_dtype)
    keys[:] = [k for k, _ in items]
    values[:] = [v for _, v in items]
    return keys, values
