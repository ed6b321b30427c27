"""CPU kernels for checkpoints and files; the format lives in tensorweave.runtime.checkpoint_format."""

import os

import numpy as np

from tensorweave import errors
from tensorweave.extension import KernelSet
from tensorweave.runtime import checkpoint_format

KERNELS = KernelSet("CPU")


def _text(value):
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _texts(values, what, count):
    texts = [_text(v) for v in np.asarray(values, dtype=object).reshape(-1)]
    if len(texts) != count:
        raise errors.InvalidArgumentError(None, None, f"{what} has {len(texts)} entries for {count} tensors")
    return texts


@KERNELS.register("SaveV2")
def _save(prefix, tensor_names, shape_and_slices, *tensors, dtypes):
    names = _texts(tensor_names, "tensor_names", len(tensors))
    specs = _texts(shape_and_slices, "shape_and_slices", len(tensors))
    checkpoint_format.write_checkpoint(_text(prefix), list(zip(names, specs, tensors, dtypes)))


@KERNELS.register("RestoreV2")
def _restore(prefix, tensor_names, shape_and_slices, *, dtypes, shapes):
    prefix = _text(prefix)
    names = _texts(tensor_names, "tensor_names", len(dtypes))
    specs = _texts(shape_and_slices, "shape_and_slices", len(dtypes))
    reader = checkpoint_format.CheckpointReader(prefix)
    saved_dtypes = reader.variable_to_dtype_map()
    out = []
    for i, (name, spec, dtype) in enumerate(zip(names, specs, dtypes)):
        value = reader.get_slice(name, spec)
        if saved_dtypes[name] is not dtype:
            raise errors.InvalidArgumentError(None, None, (
                f"{name!r} is {saved_dtypes[name].name} in checkpoint {prefix!r}, but it is restored as "
                f"{dtype.name}"))
        if shapes and not shapes[i].is_compatible_with(value.shape):
            raise errors.InvalidArgumentError(None, None, (
                f"{name!r} has shape {list(value.shape)} in checkpoint {prefix!r}, but the variable it restores "
                f"has shape {shapes[i].as_list()}; the checkpoint was made from a different model"))
        out.append(value)
    return out


@KERNELS.register("MergeV2Checkpoints")
def _merge(*prefixes, delete_old_dirs):
    *parts, destination = prefixes
    checkpoint_format.merge_checkpoints([_text(p) for p in parts], _text(destination), delete_old_dirs)


@KERNELS.register("ShardedFilename")
def _sharded_filename(basename, shard, num_shards):
    return np.array(f"{_text(basename)}-{int(shard):05d}-of-{int(num_shards):05d}".encode(), dtype=object)


@KERNELS.register("StringJoin")
def _string_join(*inputs, separator):
    arrays = [np.asarray(i, dtype=object) for i in inputs]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    columns = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    sep = separator.encode()
    joined = [sep.join(v if isinstance(v, bytes) else str(v).encode() for v in row) for row in zip(*columns)]
    out = np.empty(len(joined), dtype=object)
    out[:] = joined
    return out.reshape(shape)


@KERNELS.register("ReadFile")
def _read_file(filename):
    path = _text(filename)
    try:
        with open(path, "rb") as f:
            return np.array(f.read(), dtype=object)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"file {path!r} does not exist") from None


@KERNELS.register("WriteFile")
def _write_file(filename, contents):
    path = _text(filename)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    checkpoint_format.atomic_write(path, data if isinstance(data, bytes) else str(data).encode())
