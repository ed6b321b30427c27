"""TF's ops for warm-starting a matrix whose vocabulary changed: ``GenerateVocabRemapping`` (each new vocabulary
line's row in the old vocabulary file) and ``LoadAndRemapMatrix`` (a checkpoint's matrix with its rows and columns
moved there, new cells from initializing values). They run when the initializer runs, reading the files then, as
TF's do; ``train/checkpoint_ops.py`` builds initializers from them."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = []

GENERATE_VOCAB_REMAPPING = DEFS.define(
    "GenerateVocabRemapping", inputs=["new_vocab_file: string", "old_vocab_file: string"],
    outputs=["remapping: int64", "num_present: int32"],
    attrs=["new_vocab_offset: int >= 0", "num_new_vocab: int >= 0", "old_vocab_size: int >= -1 = -1"],
    grad=NOT_DIFFERENTIABLE,
    doc="For lines new_vocab_offset.. of the new vocabulary file (num_new_vocab of them), the line of the old file "
        "holding the same entry (its first old_vocab_size lines, all if -1), or -1; and how many were found.")
LOAD_AND_REMAP_MATRIX = DEFS.define(
    "LoadAndRemapMatrix", inputs=["ckpt_path: string", "old_tensor_name: string", "row_remapping: int64",
                                  "col_remapping: int64", "initializing_values: float"],
    outputs=["output_matrix: float"], attrs=["num_rows: int >= 0", "num_cols: int >= 1",
                                             "max_rows_in_memory: int = -1"],
    is_stateful=True, grad=NOT_DIFFERENTIABLE,
    doc="output[i, j] = old[row_remapping[i], col_remapping[j]] (col_remapping empty: the same column); a cell "
        "whose row or column is -1 takes the next of initializing_values, in row-major order.")


@GENERATE_VOCAB_REMAPPING.set_shape_fn
def _remapping_shape(op):
    return [tensor_shape.TensorShape([op.get_attr("num_new_vocab")]), tensor_shape.TensorShape([])]


@LOAD_AND_REMAP_MATRIX.set_shape_fn
def _matrix_shape(op):
    return tensor_shape.TensorShape([op.get_attr("num_rows"), op.get_attr("num_cols")])


def generate_vocab_remapping(new_vocab_file, old_vocab_file, new_vocab_offset, num_new_vocab, old_vocab_size=-1,
                             name=None):
    """``(remapping, num_present)``: see the op's doc."""
    return apply_op("GenerateVocabRemapping", [
        convert_to_tensor(new_vocab_file, dtype=dtypes.string), convert_to_tensor(old_vocab_file, dtype=dtypes.string)],
        {"new_vocab_offset": int(new_vocab_offset), "num_new_vocab": int(num_new_vocab),
         "old_vocab_size": int(old_vocab_size)}, name=name or "GenerateVocabRemapping")


def load_and_remap_matrix(ckpt_path, old_tensor_name, row_remapping, col_remapping, initializing_values, num_rows,
                          num_cols, max_rows_in_memory=-1, name=None):
    """The remapped float32 [num_rows, num_cols] matrix: see the op's doc."""
    return apply_op("LoadAndRemapMatrix", [
        convert_to_tensor(ckpt_path, dtype=dtypes.string), convert_to_tensor(old_tensor_name, dtype=dtypes.string),
        convert_to_tensor(row_remapping, dtype=dtypes.int64), convert_to_tensor(col_remapping, dtype=dtypes.int64),
        convert_to_tensor(initializing_values, dtype=dtypes.float32)],
        {"num_rows": int(num_rows), "num_cols": int(num_cols), "max_rows_in_memory": int(max_rows_in_memory)},
        name=name or "LoadAndRemapMatrix")
