"""``tf.sparse.cross`` and ``cross_hashed``: feature crosses as TF1 builds them for wide models. Each row's cross is
the cartesian product of that row's features from every input (SparseTensors or dense [batch, k] tensors, strings
or int64), joined by ``_X_`` or hashed as TF hashes them, the last input changing fastest, as TF's SparseCross op
(which takes the SparseTensors first, then the dense tensors, whatever their order in the list)."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = []

SPARSE_CROSS = DEFS.define(
    "SparseCross", inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
                           "dense_inputs: dense_types"],
    outputs=["output_indices: int64", "output_values: out_type", "output_shape: int64"],
    attrs=["N: int >= 0", "hashed_output: bool", "num_buckets: int >= 0", "hash_key: int",
           "sparse_types: list({int64, string}) >= 0", "dense_types: list({int64, string}) >= 0",
           "out_type: {int64, string}", "internal_type: {int64, string}"], grad=NOT_DIFFERENTIABLE,
    doc="Row by row, every combination of one feature from each input, joined by '_X_' or hashed (TF's "
        "FingerprintCat64 over the features' Fingerprint64s, modulo num_buckets).")


@SPARSE_CROSS.set_shape_fn
def _cross_shape(op):
    return [tensor_shape.TensorShape([None, 2]), tensor_shape.TensorShape([None]), tensor_shape.TensorShape([2])]


_DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's, for crosses hashed without a key


def _cross(inputs, hashed, num_buckets, hash_key, name, api):
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"{api}: inputs must be a list of SparseTensors and Tensors, got {inputs!r:.80}")
    sparse = [t for t in inputs if isinstance(t, SparseTensor)]
    dense = [convert_to_tensor(t) for t in inputs if not isinstance(t, SparseTensor)]
    for t in [s.values for s in sparse] + dense:
        if t.dtype not in (dtypes.int64, dtypes.string):
            raise TypeError(f"{api}: inputs must be int64 or string, got {t.dtype.name} ({t.name})")
    out_type = dtypes.int64 if hashed else dtypes.string
    with name_scope(name or "SparseCross") as scope:
        outputs = apply_op("SparseCross", [[s.indices for s in sparse], [s.values for s in sparse],
                                           [s.dense_shape for s in sparse], dense],
                           {"hashed_output": hashed, "num_buckets": num_buckets, "hash_key": hash_key,
                            "out_type": out_type, "internal_type": out_type}, name=scope)
    return SparseTensor(*outputs)


def sparse_cross(inputs, name=None):
    """The crosses of ``inputs`` (a list of 2-D SparseTensors and dense tensors, string or int64, one row per
    example) as a string SparseTensor [batch, most crosses in a row]: 'a_X_1_X_x' for features a, 1 and x."""
    return _cross(inputs, False, 0, 0, name, "tf.sparse.cross")


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The crosses of ``inputs`` as int64 hashes, TF's bit for bit (a hashed wide model's bucket ids match TF1's):
    in [0, num_buckets) when ``num_buckets`` > 0; ``hash_key`` seeds the chain (TF's default key when None)."""
    if int(num_buckets) < 0:
        raise ValueError(f"tf.sparse.cross_hashed: num_buckets must be 0 (no buckets) or more, got {num_buckets}")
    key = _DEFAULT_HASH_KEY if hash_key is None else int(hash_key)
    return _cross(inputs, True, int(num_buckets), key, name, "tf.sparse.cross_hashed")
