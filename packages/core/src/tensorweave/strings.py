"""``tf.strings``: TF 1.15's string functions (join, split, strip, length, case, substr, regular expressions,
number conversions, hash buckets, reduce_join)."""

from tensorweave.ops.string_ops import (  # noqa: F401
    as_string, join, length, lower, reduce_join, regex_full_match, regex_replace, split, strip, substr, to_hash_bucket,
    to_hash_bucket_fast, to_hash_bucket_strong, to_number, upper,
)
