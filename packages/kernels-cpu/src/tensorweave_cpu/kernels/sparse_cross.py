"""CPU kernel of SparseCross: the crosses of each row's features, as strings (tf.sparse.cross) or as TF's
hashes (tf.sparse.cross_hashed: FingerprintCat64 chained from the hash key over each feature's hash, the
Fingerprint64 of a string or an int64 itself, then modulo the buckets)."""

import functools
import itertools

import numpy as np

from tensorweave.extension import KernelSet

from tensorweave_cpu.kernels.sparse import _invalid
from tensorweave_cpu.string_hashes import fingerprint64, fingerprint_cat64

KERNELS = KernelSet("CPU")
_MASK = (1 << 64) - 1


def _text(value):
    return value if isinstance(value, bytes) else str(int(value)).encode()


def _feature_hash(value):
    return fingerprint64(value) if isinstance(value, bytes) else int(value) & _MASK


def _hasher(num_buckets, hash_key):
    modulus = num_buckets if num_buckets > 0 else (1 << 63) - 1  # no buckets: modulo int64's max, as TF
    return lambda combo: functools.reduce(fingerprint_cat64, combo, hash_key & _MASK) % modulus


@KERNELS.register("SparseCross")
def _cross(*parts, N, hashed_output, num_buckets, hash_key, sparse_types, dense_types, out_type, internal_type):
    feature, join = (_feature_hash, _hasher(num_buckets, hash_key)) if hashed_output else (_text, b"_X_".join)
    indices, values, shapes, dense = parts[:N], parts[N:2 * N], parts[2 * N:3 * N], parts[3 * N:]
    batch = {int(s[0]) for s in shapes} | {d.shape[0] for d in dense}
    if len(batch) != 1:
        raise _invalid(f"SparseCross: the inputs have different numbers of rows: {sorted(batch)}")
    batch = batch.pop()
    rows = []
    for i in range(batch):
        features = [[feature(v) for v in vals[ind[:, 0] == i]] for ind, vals in zip(indices, values)]
        features += [[feature(v) for v in d[i]] for d in dense]
        rows.append([join(combo) for combo in itertools.product(*features)])
    width = max((len(r) for r in rows), default=0)
    out_indices = np.array([[i, j] for i, r in enumerate(rows) for j in range(len(r))], np.int64).reshape(-1, 2)
    out_values = np.empty(len(out_indices), dtype=np.int64 if hashed_output else object)
    out_values[:] = [v for r in rows for v in r]
    return out_indices, out_values, np.array([batch, width], np.int64)
