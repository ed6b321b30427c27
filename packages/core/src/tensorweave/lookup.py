"""``tf.lookup`` (and ``tf.contrib.lookup``): hash tables with their initializers, vocabulary tables with OOV
buckets, and mutable tables."""

from tensorweave.ops.lookup_ops import (  # noqa: F401
    HashTable, IdTableWithHashBuckets, KeyValueTensorInitializer, LookupInterface, MutableHashTable, StaticHashTable,
    StaticVocabularyTable, TableInitializerBase, TextFileIdTableInitializer, TextFileIndex, TextFileInitializer,
    TextFileStringTableInitializer, index_table_from_file, index_table_from_tensor, index_to_string_table_from_file,
    index_to_string_table_from_tensor, tables_initializer,
)

import types as _types  # noqa: E402

experimental = _types.SimpleNamespace(MutableHashTable=MutableHashTable)
"""``tf.lookup.experimental``: TF 2's home of the mutable table."""
