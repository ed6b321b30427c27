"""``tf.contrib.lookup``: TF1's home of the lookup tables (the same classes and functions as ``tf.lookup``)."""

from tensorweave.lookup import *  # noqa: F401,F403
from tensorweave.ops.lookup_ops import (  # noqa: F401
    HashTable, IdTableWithHashBuckets, KeyValueTensorInitializer, MutableHashTable, TextFileIndex, TextFileInitializer,
    index_table_from_file, index_table_from_tensor, index_to_string_table_from_file, index_to_string_table_from_tensor,
)
