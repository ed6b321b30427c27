"""CPU kernel of SparseCross (tf.sparse.cross): the crosses of each row's features, as strings."""

import itertools

import numpy as np

from tensorweave.extension import KernelSet

from tensorweave_cpu.kernels.sparse import _invalid

KERNELS = KernelSet("CPU")


def _text(value):
    return value if isinstance(value, bytes) else str(int(value)).encode()


@KERNELS.register("SparseCross")
def _cross(*parts, N, hashed_output, num_buckets, hash_key, sparse_types, dense_types, out_type, internal_type):
    if hashed_output:
        raise _invalid("SparseCross: hashed crosses (tf.sparse.cross_hashed) are not supported; cross strings")
    indices, values, shapes, dense = parts[:N], parts[N:2 * N], parts[2 * N:3 * N], parts[3 * N:]
    batch = {int(s[0]) for s in shapes} | {d.shape[0] for d in dense}
    if len(batch) != 1:
        raise _invalid(f"SparseCross: the inputs have different numbers of rows: {sorted(batch)}")
    batch = batch.pop()
    rows = []
    for i in range(batch):
        features = [[_text(v) for v in vals[ind[:, 0] == i]] for ind, vals in zip(indices, values)]
        features += [[_text(v) for v in d[i]] for d in dense]
        rows.append([b"_X_".join(combo) for combo in itertools.product(*features)])
    width = max((len(r) for r in rows), default=0)
    out_indices = np.array([[i, j] for i, r in enumerate(rows) for j in range(len(r))], np.int64).reshape(-1, 2)
    out_values = np.empty(len(out_indices), dtype=object)
    out_values[:] = [v for r in rows for v in r]
    return out_indices, out_values, np.array([batch, width], np.int64)
