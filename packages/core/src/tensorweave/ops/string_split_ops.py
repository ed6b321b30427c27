"""``tf.string_split``: splits each string of a vector at any of the delimiter's characters (StringSplit), giving
a SparseTensor of tokens whose row is the string's and whose column is the token's place in it."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = ["string_split"]

STRING_SPLIT = DEFS.define(
    "StringSplit", inputs=["input: string", "delimiter: string"],
    outputs=["indices: int64", "values: string", "shape: int64"], attrs=["skip_empty: bool = True"],
    grad=NOT_DIFFERENTIABLE,
    doc="Tokens of each string split at any byte of delimiter (every byte apart when it is empty); an empty "
        "string has no tokens; with skip_empty, empty tokens are dropped.")


@STRING_SPLIT.set_shape_fn
def _string_split_shape(op):
    op.inputs[0].shape.with_rank(1)
    op.inputs[1].shape.with_rank(0)
    return [tensor_shape.TensorShape([None, 2]), tensor_shape.TensorShape([None]), tensor_shape.TensorShape([2])]


def string_split(source, delimiter=" ", skip_empty=True, sep=None, result_type="SparseTensor", name=None):
    """Splits each string of the vector ``source`` at any character of ``delimiter`` (TF 1.15's
    ``tf.string_split``; ``sep`` is its newer name): a SparseTensor [len(source), most tokens] of the tokens."""
    if result_type != "SparseTensor":
        raise ValueError(f"string_split: result_type {result_type!r} is not supported; use 'SparseTensor' "
                         f"(RaggedTensor does not exist here)")
    delimiter = delimiter if sep is None else sep
    source = convert_to_tensor(source, dtype=dtypes.string, name="source")
    delimiter = convert_to_tensor(delimiter, dtype=dtypes.string, name="delimiter")
    indices, values, shape = apply_op("StringSplit", [source, delimiter], {"skip_empty": bool(skip_empty)},
                                      name=name or "StringSplit")
    return SparseTensor(indices, values, shape)
