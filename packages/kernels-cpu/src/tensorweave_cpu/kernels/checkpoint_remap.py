"""CPU kernels that warm-start a matrix across a vocabulary change (TF's GenerateVocabRemapping and
LoadAndRemapMatrix): vocabulary files are text, one entry a line; the matrix comes from a checkpoint."""

import numpy as np

from tensorweave.extension import KernelSet, checkpoint_format, errors

from tensorweave_cpu.kernels.io import _text

KERNELS = KernelSet("CPU")


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _vocabulary(path):
    """The lines of a vocabulary file (TF's line reader: '\\n' ends a line, a '\\r' before it is dropped)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise errors.NotFoundError(None, None, f"cannot read vocabulary file {path!r}: {e.strerror}") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


@KERNELS.register("GenerateVocabRemapping")
def _generate_vocab_remapping(new_vocab_file, old_vocab_file, *, new_vocab_offset, num_new_vocab, old_vocab_size):
    new_path, old_path = _text(new_vocab_file), _text(old_vocab_file)
    new = _vocabulary(new_path)
    if new_vocab_offset + num_new_vocab > len(new):
        raise _invalid(f"new vocabulary file {new_path!r} has {len(new)} lines; lines {new_vocab_offset} to "
                       f"{new_vocab_offset + num_new_vocab - 1} were asked for")
    old = _vocabulary(old_path)
    if old_vocab_size != -1:
        if old_vocab_size > len(old):
            raise _invalid(f"old vocabulary file {old_path!r} has {len(old)} lines, fewer than old_vocab_size="
                           f"{old_vocab_size}")
        old = old[:old_vocab_size]
    where = {}
    for i, entry in enumerate(old):
        if where.setdefault(entry, i) != i:
            raise _invalid(f"old vocabulary file {old_path!r} holds {entry!r} twice (lines {where[entry]} and {i})")
    remapping = np.array([where.get(entry, -1) for entry in new[new_vocab_offset:new_vocab_offset + num_new_vocab]],
                         np.int64)
    return remapping, np.int32((remapping != -1).sum())


@KERNELS.register("LoadAndRemapMatrix")
def _load_and_remap_matrix(ckpt_path, old_tensor_name, row_remapping, col_remapping, initializing_values, *,
                           num_rows, num_cols, max_rows_in_memory):
    prefix, name = _text(ckpt_path), _text(old_tensor_name)
    old = checkpoint_format.CheckpointReader(prefix).get_tensor(name)
    if old.ndim != 2:
        raise _invalid(f"{name!r} in checkpoint {prefix!r} has shape {list(old.shape)}; a matrix is remapped")
    rows = np.asarray(row_remapping, np.int64).reshape(-1)
    cols = np.asarray(col_remapping, np.int64).reshape(-1)
    if len(rows) != num_rows:
        raise _invalid(f"row_remapping has {len(rows)} entries for num_rows={num_rows}")
    if len(cols) == 0:
        if num_cols > old.shape[1]:
            raise _invalid(f"num_cols={num_cols} without a column remapping, but {name!r} has {old.shape[1]} columns")
        cols = np.arange(num_cols)
    elif len(cols) != num_cols:
        raise _invalid(f"col_remapping has {len(cols)} entries for num_cols={num_cols}")
    for what, remap, size in (("row", rows, old.shape[0]), ("column", cols, old.shape[1])):
        if ((remap < -1) | (remap >= size)).any():
            raise _invalid(f"a {what} remapping entry is outside {name!r}'s {size} {what}s: {remap.tolist()}")
    present = (rows[:, None] != -1) & (cols[None, :] != -1)
    values = np.asarray(initializing_values, np.float32).reshape(-1)
    if values.size != (~present).sum():
        raise _invalid(f"{values.size} initializing values for {(~present).sum()} new cells (of {num_rows}x{num_cols}, "
                       f"{present.sum()} loaded from {name!r})")
    out = np.empty((num_rows, num_cols), np.float32)
    out[~present] = values
    out[present] = old[np.broadcast_to(rows[:, None], present.shape)[present],
                       np.broadcast_to(cols[None, :], present.shape)[present]]
    return out
