"""Lookup tables (``tf.lookup``, ``tf.contrib.lookup``): hash tables as resources in a container, so they live
across ``Session.run`` calls, filled by an initializer op that ``tf.tables_initializer()`` runs (TF1's
TABLE_INITIALIZERS collection), with default values and out-of-vocabulary buckets numbered as TF numbers them
(Fingerprint64 of the key, or of its decimal string for integer keys, modulo the bucket count, after the vocabulary).
"""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import comparison_ops, control_flow_ops, math_ops, range_ops, shape_ops, string_ops
from tensorweave.ops import unary_math_ops

DEFS = OpDefList()

__all__ = ["tables_initializer", "initialize_all_tables"]

_TABLE_ATTRS = ["container: string = ''", "shared_name: string = ''", "use_node_name_sharing: bool = False",
                "key_dtype: type", "value_dtype: type"]
_STATEFUL = {"is_stateful": True, "grad": NOT_DIFFERENTIABLE}

DEFS.define("HashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS, shape_fn=common_shapes.scalar_shape,
            doc="A hash table, filled once by an initializer op; lookups before that fail.", **_STATEFUL)
DEFS.define("MutableHashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS,
            shape_fn=common_shapes.scalar_shape, doc="A hash table that LookupTableInsertV2 adds to.", **_STATEFUL)
DEFS.define("InitializeTableV2", inputs=["table_handle: resource", "keys: Tkey", "values: Tval"],
            attrs=["Tkey: type", "Tval: type"], doc="Fills a table with keys -> values (a second run leaves it).",
            **_STATEFUL)
DEFS.define("InitializeTableFromTextFileV2", inputs=["table_handle: resource", "filename: string"],
            attrs=["key_index: int >= -2", "value_index: int >= -2", "vocab_size: int >= -1 = -1",
                   "delimiter: string = '\\t'"],
            doc="Fills a table from a text file: a column, the whole line (-2) or the line number (-1) of each line "
                "as key and value.", **_STATEFUL)
FIND = DEFS.define("LookupTableFindV2", inputs=["table_handle: resource", "keys: Tin", "default_value: Tout"],
                   outputs=["values: Tout"], attrs=["Tin: type", "Tout: type"],
                   doc="The value of each key, default_value for keys not in the table.", **_STATEFUL)
FIND.set_shape_fn(lambda op: op.inputs[1].shape)
DEFS.define("LookupTableInsertV2", inputs=["table_handle: resource", "keys: Tin", "values: Tout"],
            attrs=["Tin: type", "Tout: type"], doc="Sets keys -> values in a mutable table.", **_STATEFUL)
DEFS.define("LookupTableSizeV2", inputs=["table_handle: resource"], outputs=["size: int64"],
            shape_fn=common_shapes.scalar_shape, doc="The number of keys in the table.", **_STATEFUL)
DEFS.define("LookupTableExportV2", inputs=["table_handle: resource"], outputs=["keys: Tkeys", "values: Tvalues"],
            attrs=["Tkeys: type", "Tvalues: type"],
            shape_fn=lambda op: [tensor_shape.TensorShape([None])] * 2,
            doc="Every key and its value.", **_STATEFUL)


def tables_initializer(name="init_all_tables"):
    """One op that runs every table initializer of the graph (the TABLE_INITIALIZERS collection)."""
    initializers = graph_mod.get_collection(graph_mod.GraphKeys.TABLE_INITIALIZERS)
    return control_flow_ops.group(*initializers, name=name)


initialize_all_tables = tables_initializer


class TextFileIndex:
    WHOLE_LINE = -2
    LINE_NUMBER = -1


# ---- initializers ---------------------------------------------------------------------------------------------
class TableInitializerBase:
    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)


class KeyValueTensorInitializer(TableInitializerBase):
    """Fills a table with the pairs of two tensors (int32 keys become int64, as TF)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        with graph_mod.name_scope(name, "key_value_init", [keys, values]) as scope:
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
            self._name = scope
        if self._keys.dtype == dtypes.int32:
            self._keys = unary_math_ops.cast(self._keys, dtypes.int64)
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        with graph_mod.name_scope(self._name, values=[table.resource_handle]):
            return apply_op("InitializeTableV2", [table.resource_handle, self._keys, self._values],
                            name="table_init")


class TextFileInitializer(TableInitializerBase):
    """Fills a table from a text file: key and value each a column (split at ``delimiter``), the whole line
    (TextFileIndex.WHOLE_LINE) or the line number (TextFileIndex.LINE_NUMBER); ``vocab_size`` lines if given."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None, delimiter="\t",
                 name=None):
        if key_index == TextFileIndex.LINE_NUMBER and dtypes.as_dtype(key_dtype) != dtypes.int64:
            raise ValueError(f"TextFileInitializer: line-number keys must be int64, got {key_dtype}")
        if TextFileIndex.WHOLE_LINE in (key_index, value_index) and dtypes.string not in (
                dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)):
            raise ValueError("TextFileInitializer: whole lines are strings; give the string side string dtype")
        self._filename, self._key_index, self._value_index = filename, key_index, value_index
        self._vocab_size, self._delimiter, self._name = vocab_size, delimiter, name or "text_file_init"
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        with graph_mod.name_scope(self._name, values=[table.resource_handle]):
            filename = convert_to_tensor(self._filename, dtypes.string, name="asset_filepath")
            init = apply_op("InitializeTableFromTextFileV2", [table.resource_handle, filename],
                            {"key_index": self._key_index, "value_index": self._value_index,
                             "vocab_size": -1 if self._vocab_size is None else int(self._vocab_size),
                             "delimiter": self._delimiter}, name="table_init")
        graph_mod.add_to_collection(graph_mod.GraphKeys.ASSET_FILEPATHS, filename)
        return init


class TextFileIdTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None, delimiter="\t", name="text_file_id_table_init",
                 key_dtype=dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64, value_column_index, vocab_size,
                         delimiter, name)


class TextFileStringTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None, delimiter="\t",
                 name="text_file_string_table_init"):
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string, value_column_index, vocab_size,
                         delimiter, name)


# ---- tables --------------------------------------------------------------------------------------------------------
class LookupInterface:
    """What every table offers: dtypes, a name, lookup and size."""

    def __init__(self, key_dtype, value_dtype, name):
        self._key_dtype, self._value_dtype, self._name = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype), name

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)
    name = property(lambda self: self._name)

    def _keys(self, keys):
        """(values tensor, rebuild) for dense or sparse keys, cast from int32 to an int64 key type."""
        sparse = isinstance(keys, SparseTensor)
        values = convert_to_tensor(keys.values if sparse else keys, name="keys")
        if values.dtype == dtypes.int32 and self._key_dtype == dtypes.int64:
            values = unary_math_ops.cast(values, dtypes.int64)
        if values.dtype != self._key_dtype:
            raise TypeError(f"{self._name}: keys must have dtype {self._key_dtype.name}, got {values.dtype.name}")
        return values, (lambda v: SparseTensor(keys.indices, v, keys.dense_shape)) if sparse else (lambda v: v)


class _ResourceTable(LookupInterface):
    """A table behind a HashTableV2 / MutableHashTableV2 handle."""

    def __init__(self, op_type, key_dtype, value_dtype, default_value, name, shared_name=None):
        super().__init__(key_dtype, value_dtype, name)
        self._resource_handle = apply_op(op_type, [], {"key_dtype": self._key_dtype, "value_dtype": self._value_dtype,
                                                       "shared_name": shared_name or ""}, name=name)
        self._name = self._resource_handle.op.name
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype, name="default_value")

    resource_handle = property(lambda self: self._resource_handle)
    table_ref = resource_handle
    default_value = property(lambda self: self._default_value)

    def size(self, name=None):
        with graph_mod.name_scope(name, f"{self._name}_Size"):
            return apply_op("LookupTableSizeV2", [self._resource_handle], name="LookupTableSizeV2")

    def lookup(self, keys, name=None):
        """The value of each key (dense or sparse), the default value for keys not in the table."""
        with graph_mod.name_scope(name, f"{self._name}_Lookup"):
            values, rebuild = self._keys(keys)
            return rebuild(apply_op("LookupTableFindV2", [self._resource_handle, values, self._default_value],
                                    name="LookupTableFindV2"))


class HashTable(_ResourceTable):
    """An immutable table filled by ``initializer`` (run by tf.tables_initializer(); TF 2's StaticHashTable)."""

    def __init__(self, initializer, default_value, shared_name=None, name=None):
        with graph_mod.name_scope(name, "hash_table"):
            super().__init__("HashTableV2", initializer.key_dtype, initializer.value_dtype, default_value,
                             "hash_table", shared_name)
            self._init_op = initializer.initialize(self)
        graph_mod.add_to_collection(graph_mod.GraphKeys.TABLE_INITIALIZERS, self._init_op)

    init = property(lambda self: self._init_op)
    initializer = init


StaticHashTable = HashTable


class MutableHashTable(_ResourceTable):
    """A table that ``insert`` fills at run time; ``export`` gives its keys and values."""

    def __init__(self, key_dtype, value_dtype, default_value, shared_name=None, name="MutableHashTable",
                 checkpoint=True):
        super().__init__("MutableHashTableV2", key_dtype, value_dtype, default_value, name, shared_name)

    def insert(self, keys, values, name=None):
        with graph_mod.name_scope(name, f"{self._name}_lookup_table_insert"):
            keys, _ = self._keys(keys)
            values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
            return apply_op("LookupTableInsertV2", [self._resource_handle, keys, values], name="LookupTableInsertV2")

    def export(self, name=None):
        with graph_mod.name_scope(name, f"{self._name}_lookup_table_export_values"):
            return apply_op("LookupTableExportV2", [self._resource_handle],
                            {"Tkeys": self._key_dtype, "Tvalues": self._value_dtype}, name="LookupTableExportV2")


class IdTableWithHashBuckets(LookupInterface):
    """Ids from ``table`` (vocabulary ids), and for other keys ``vocab size + Fingerprint64(key) % buckets``."""

    def __init__(self, table, num_oov_buckets, hasher_spec=None, name=None, key_dtype=None):
        if table is None and key_dtype is None:
            raise ValueError("IdTableWithHashBuckets: give a table or key_dtype")
        self._table, self._num_oov_buckets = table, int(num_oov_buckets)
        key_dtype = table.key_dtype if table is not None else key_dtype
        super().__init__(key_dtype, dtypes.int64, name or (table.name if table is not None else "hash_bucket"))

    init = property(lambda self: self._table.init if self._table is not None else control_flow_ops.no_op())
    initializer = init

    def size(self, name=None):
        with graph_mod.name_scope(name, f"{self._name}_Size"):
            size = self._table.size() if self._table is not None else 0
            return size + self._num_oov_buckets

    def lookup(self, keys, name=None):
        values, rebuild = self._keys(keys)
        if self._num_oov_buckets == 0:
            return rebuild(self._table.lookup(values, name=name))
        with graph_mod.name_scope(name, f"{self._name}_Lookup"):
            text = values if values.dtype == dtypes.string else string_ops.as_string(values)
            buckets = string_ops.string_to_hash_bucket_fast(text, self._num_oov_buckets, name="hash_bucket")
            if self._table is None:
                return rebuild(buckets)
            ids = self._table.lookup(values)
            buckets = math_ops.add(buckets, self._table.size())
            return rebuild(comparison_ops.where(comparison_ops.not_equal(ids, self._table.default_value), ids, buckets))


class StaticVocabularyTable(IdTableWithHashBuckets):
    """TF 2's name: ids from ``initializer``'s vocabulary, OOV keys in ``num_oov_buckets`` buckets after it."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None):
        table = HashTable(initializer, -1) if initializer is not None else None
        super().__init__(table, num_oov_buckets, name=name, key_dtype=lookup_key_dtype)


# ---- the index_table helpers -------------------------------------------------------------------------------------
def _with_buckets(table, num_oov_buckets, key_dtype):
    return IdTableWithHashBuckets(table, num_oov_buckets, key_dtype=key_dtype) if num_oov_buckets else table


def _check_buckets(num_oov_buckets, default_value):
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be >= 0, got {num_oov_buckets}")
    if num_oov_buckets and default_value != -1:
        raise ValueError(f"with num_oov_buckets, default_value must be -1 (the ids are all taken), got "
                         f"{default_value}")


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None, default_value=-1,
                          hasher_spec=None, key_dtype=dtypes.string, name=None,
                          key_column_index=TextFileIndex.WHOLE_LINE, value_column_index=TextFileIndex.LINE_NUMBER,
                          delimiter="\t"):
    """A table from each line of ``vocabulary_file`` (its key) to its line number, OOV keys in buckets after it."""
    if not vocabulary_file:
        raise ValueError("index_table_from_file: vocabulary_file must be given")
    _check_buckets(num_oov_buckets, default_value)
    key_dtype = dtypes.as_dtype(key_dtype)
    with graph_mod.name_scope(name, "string_to_index"):
        initializer = TextFileIdTableInitializer(vocabulary_file, key_column_index, value_column_index, vocab_size,
                                                 delimiter, key_dtype=dtypes.int64 if key_dtype.is_integer
                                                 else key_dtype)
        table = HashTable(initializer, default_value)
        return _with_buckets(table, num_oov_buckets, key_dtype)


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1, hasher_spec=None, dtype=dtypes.string,
                            name=None):
    """A table from each entry of ``vocabulary_list`` to its position, OOV keys in buckets after it."""
    if vocabulary_list is None:
        raise ValueError("index_table_from_tensor: vocabulary_list must be given")
    _check_buckets(num_oov_buckets, default_value)
    with graph_mod.name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list, dtype=dtype, name="vocabulary_list")
        if keys.dtype.is_integer and keys.dtype != dtypes.int64:
            keys = unary_math_ops.cast(keys, dtypes.int64)
        values = range_ops.range(shape_ops.size(keys, out_type=dtypes.int64), dtype=dtypes.int64, name="values")
        table = HashTable(KeyValueTensorInitializer(keys, values, name="table_init"), default_value)
        return _with_buckets(table, num_oov_buckets, keys.dtype)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK", name=None,
                                    key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE, delimiter="\t"):
    """A table from line numbers of ``vocabulary_file`` to its lines; other ids give ``default_value``."""
    with graph_mod.name_scope(name, "index_to_string"):
        initializer = TextFileStringTableInitializer(vocabulary_file, key_column_index, value_column_index,
                                                     vocab_size, delimiter)
        return HashTable(initializer, default_value)


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table from positions in ``vocabulary_list`` to its entries; other ids give ``default_value``."""
    with graph_mod.name_scope(name, "index_to_string"):
        values = convert_to_tensor(vocabulary_list, dtypes.string, name="vocabulary_list")
        keys = range_ops.range(shape_ops.size(values, out_type=dtypes.int64), dtype=dtypes.int64, name="keys")
        return HashTable(KeyValueTensorInitializer(keys, values, name="table_init"), default_value)

