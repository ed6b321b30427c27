"""Initializers that load a checkpoint's matrix with its rows (or columns) moved to a new vocabulary, as TF 1.15's
``checkpoint_ops``: entries of both vocabularies keep their old row, new entries and OOV buckets take a backup
initializer's values. ``warm_start`` uses them for ``var_name_to_vocab_info``."""

from tensorweave import dtypes
from tensorweave.ops import concat_split_ops, init_ops, range_ops
from tensorweave.ops.checkpoint_remap_ops import generate_vocab_remapping, load_and_remap_matrix

__all__ = []


def _remapped(ckpt_path, old_tensor_name, row_offset, num_rows, new_col_vocab_size, initializer, old_row_vocab_size,
              old_row_vocab_file, new_row_vocab_file, old_col_vocab_file, new_col_vocab_file, num_row_oov_buckets,
              num_col_oov_buckets):
    """Rows ``row_offset..`` (``num_rows`` of the new vocabulary, then the OOV rows) of the remapped matrix."""
    if bool(old_row_vocab_file) != bool(new_row_vocab_file) or bool(old_col_vocab_file) != bool(new_col_vocab_file):
        raise ValueError(f"old and new vocabulary files must be given together: rows {old_row_vocab_file!r} and "
                         f"{new_row_vocab_file!r}, columns {old_col_vocab_file!r} and {new_col_vocab_file!r}")
    if not (new_row_vocab_file or new_col_vocab_file):
        raise ValueError("Must provide either row or column vocab files. If no remapping is necessary, consider "
                         "using `tf.train.init_from_checkpoint` instead.")
    rows_present = num_rows
    if new_row_vocab_file:
        row_remapping, rows_present = generate_vocab_remapping(new_row_vocab_file, old_row_vocab_file, row_offset,
                                                               num_rows, old_row_vocab_size)
    else:
        row_remapping = range_ops.range(row_offset, row_offset + num_rows, dtype=dtypes.int64)
    col_remapping, cols_present = [], new_col_vocab_size
    if new_col_vocab_file:
        col_remapping, cols_present = generate_vocab_remapping(new_col_vocab_file, old_col_vocab_file, 0,
                                                               new_col_vocab_size)
    missing = num_rows * new_col_vocab_size - rows_present * cols_present
    matrix = load_and_remap_matrix(ckpt_path, old_tensor_name, row_remapping, col_remapping,
                                   initializer(concat_split_ops.stack([missing, 1])), num_rows, new_col_vocab_size)
    if num_row_oov_buckets > 0:
        matrix = concat_split_ops.concat([matrix, initializer([num_row_oov_buckets, new_col_vocab_size])], 0)
    if num_col_oov_buckets > 0:
        matrix = concat_split_ops.concat(
            [matrix, initializer([num_rows + num_row_oov_buckets, num_col_oov_buckets])], 1)
    return matrix


def load_and_remap_matrix_initializer(ckpt_path, old_tensor_name, new_row_vocab_size, new_col_vocab_size,
                                      old_row_vocab_size=-1, old_row_vocab_file=None, new_row_vocab_file=None,
                                      old_col_vocab_file=None, new_col_vocab_file=None, num_row_oov_buckets=0,
                                      num_col_oov_buckets=0, initializer=None):
    """An initializer of a float32 [new_row_vocab_size + num_row_oov_buckets, new_col_vocab_size +
    num_col_oov_buckets] matrix (or of one row partition of it) from ``old_tensor_name`` in ``ckpt_path``; cells
    it cannot load take ``initializer``'s values (zeros by default)."""
    if num_row_oov_buckets < 0 or num_col_oov_buckets < 0:
        raise ValueError(f"OOV bucket counts must be >= 0, got {num_row_oov_buckets} and {num_col_oov_buckets}")
    initializer = init_ops.zeros_initializer() if initializer is None else initializer
    if not callable(initializer):
        raise TypeError(f"initializer must be callable, instead of being {initializer} of type {type(initializer)}.")

    def remap(shape, dtype=dtypes.float32, partition_info=None):
        if dtypes.as_dtype(dtype) is not dtypes.float32:
            raise TypeError(f"Currently, only float32 is supported. Received dtype: {dtypes.as_dtype(dtype).name}")
        shape = list(shape)
        if len(shape) != 2 or shape[0] <= 0:
            raise ValueError(f"Expected a 2-dim shape with rows, but received: {shape}")
        if shape[1] != new_col_vocab_size + num_col_oov_buckets:
            raise ValueError(f"Expected 2nd dim of shape to be new_col_vocab_size ({new_col_vocab_size}) + "
                             f"num_col_oov_buckets ({num_col_oov_buckets}) = "
                             f"{new_col_vocab_size + num_col_oov_buckets}, but received shape: {shape}")
        offset = 0 if partition_info is None else partition_info.single_offset(shape)
        if offset + shape[0] > new_row_vocab_size + num_row_oov_buckets:
            raise ValueError(f"Trying to initialize {shape[0]} additional rows after {offset} rows have already been "
                             f"initialized, which would exceed expected total row count of new_row_vocab_size "
                             f"({new_row_vocab_size}) + num_row_oov_buckets ({num_row_oov_buckets}) = "
                             f"{new_row_vocab_size + num_row_oov_buckets}.")
        oov_rows = min(shape[0], max(0, offset + shape[0] - new_row_vocab_size))
        if offset > new_row_vocab_size:  # a partition of OOV rows only
            return initializer(shape)
        return _remapped(ckpt_path, old_tensor_name, offset, shape[0] - oov_rows, new_col_vocab_size, initializer,
                         old_row_vocab_size, old_row_vocab_file, new_row_vocab_file, old_col_vocab_file,
                         new_col_vocab_file, oov_rows, num_col_oov_buckets)

    return remap
