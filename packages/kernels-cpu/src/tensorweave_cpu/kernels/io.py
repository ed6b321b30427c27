"""CPU kernels for checkpoints, files and readers; the checkpoint format lives in
tensorweave.formats.checkpoint_format, the readers in tensorweave_cpu.readers."""

import glob
import os
import re

import numpy as np

from tensorweave.extension import KernelSet, checkpoint_format, errors

from tensorweave_cpu import queues, readers
from tensorweave_cpu.shared_resources import find_or_make

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
def _save(prefix, tensor_names, shape_and_slices, *tensors, dtypes, node):
    names = _texts(tensor_names, "tensor_names", len(tensors))
    specs = _texts(shape_and_slices, "shape_and_slices", len(tensors))
    checkpoint_format.write_checkpoint(_text(prefix), list(zip(names, specs, tensors, dtypes)),
                                       node.attrs.get("_checkpoint_format", checkpoint_format.TENSORWEAVE))


@KERNELS.register("RestoreV2")
def _restore(prefix, tensor_names, shape_and_slices, *, dtypes, shapes):
    prefix = _text(prefix)
    names = _texts(tensor_names, "tensor_names", len(dtypes))
    specs = _texts(shape_and_slices, "shape_and_slices", len(dtypes))
    reader = checkpoint_format.CheckpointReader(prefix)
    out = []
    for i, (name, spec, dtype) in enumerate(zip(names, specs, dtypes)):
        value = reader.get_slice(name, spec)
        saved = reader.dtype_of(name)
        if saved is not dtype:
            raise errors.InvalidArgumentError(None, None, (
                f"{name!r} is {saved.name} in checkpoint {prefix!r}, but it is restored as {dtype.name}"))
        if shapes and not shapes[i].is_compatible_with(value.shape):
            raise errors.InvalidArgumentError(None, None, (
                f"{name!r} has shape {list(value.shape)} in checkpoint {prefix!r}, but the variable it restores "
                f"has shape {shapes[i].as_list()}; the checkpoint was made from a different model"))
        out.append(value)
    return out


@KERNELS.register("MergeV2Checkpoints")
def _merge(prefixes, destination, *, delete_old_dirs, allow_missing_files):
    parts = [_text(p) for p in np.asarray(prefixes, dtype=object).reshape(-1)]
    if allow_missing_files:
        parts = [p for p in parts if checkpoint_format.exists(p)]
    checkpoint_format.merge_checkpoints(parts, _text(destination), delete_old_dirs)


@KERNELS.register("ShardedFilename")
def _sharded_filename(basename, shard, num_shards):
    return np.array(f"{_text(basename)}-{int(shard):05d}-of-{int(num_shards):05d}".encode(), dtype=object)


@KERNELS.register("StaticRegexFullMatch")
def _static_regex_full_match(strings, *, pattern):
    regex = re.compile(pattern.encode())
    flat = np.asarray(strings, dtype=object).reshape(-1)
    return np.array([regex.fullmatch(v if isinstance(v, bytes) else str(v).encode()) is not None for v in flat],
                    dtype=np.bool_).reshape(np.shape(strings))


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


@KERNELS.register("MatchingFiles")
def _matching_files(pattern):
    patterns = [_text(p) for p in np.asarray(pattern, dtype=object).reshape(-1)]
    names = [name.encode() for p in patterns for name in sorted(glob.glob(p))]  # per pattern, as TF's
    out = np.empty(len(names), dtype=object)
    out[:] = names
    return out


@KERNELS.register("WriteFile")
def _write_file(filename, contents):
    path = _text(filename)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    checkpoint_format.atomic_write(path, data if isinstance(data, bytes) else str(data).encode())


# ---- readers ----------------------------------------------------------------------------------------
_READERS = {
    "TextLineReaderV2": lambda name, a: readers.TextLineReader(name, a["skip_header_lines"]),
    "TFRecordReaderV2": lambda name, a: readers.TFRecordReader(name, a["compression_type"]),
    "WholeFileReaderV2": lambda name, a: readers.WholeFileReader(name),
    "IdentityReaderV2": lambda name, a: readers.IdentityReader(name),
    "FixedLengthRecordReaderV2": lambda name, a: readers.FixedLengthRecordReader(
        name, a["record_bytes"], a["header_bytes"], a["footer_bytes"], a["hop_bytes"], a["encoding"]),
}


def _reader_creator(make):
    def build(node):
        return lambda ctx: find_or_make(ctx, node, lambda name: make(name, node.attrs))
    return build


for _op, _make in _READERS.items():
    KERNELS.add(_op, build=_reader_creator(_make), context=True)


def _reader(handle):
    reader = getattr(handle, "resource", None)
    if not isinstance(reader, readers.Reader):
        raise errors.InvalidArgumentError(None, None, f"expected a reader handle, got {handle!r}")
    return reader


def _queue(handle):
    queue = getattr(handle, "resource", None)
    if not isinstance(queue, queues.Queue) or len(queue.dtypes) != 1 or queue.dtypes[0].kind != "O":
        raise errors.InvalidArgumentError(None, None, f"a reader reads from a queue of strings, got {handle!r}")
    return queue


def _strings(items):
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


@KERNELS.register("ReaderReadV2", asynchronous=True)
def _read(ctx, done, reader_handle, queue_handle):
    def finished(result):
        done(result if isinstance(result, BaseException) else
             [np.array(result[0][0], dtype=object), np.array(result[0][1], dtype=object)])
    _reader(reader_handle).read(_queue(queue_handle), ctx.step.cancellation, finished)


@KERNELS.register("ReaderReadUpToV2", asynchronous=True)
def _read_up_to(ctx, done, reader_handle, queue_handle, num_records):
    if int(num_records) <= 0:
        raise errors.InvalidArgumentError(None, None, f"read_up_to needs num_records > 0, got {int(num_records)}")

    def finished(result):
        done(result if isinstance(result, BaseException) else
             [_strings([k for k, _ in result]), _strings([v for _, v in result])])
    _reader(reader_handle).read(_queue(queue_handle), ctx.step.cancellation, finished, int(num_records), up_to=True)


KERNELS.add("ReaderNumRecordsProducedV2", lambda h: np.int64(_reader(h).produced))
KERNELS.add("ReaderNumWorkUnitsCompletedV2", lambda h: np.int64(_reader(h).completed))
KERNELS.add("ReaderResetV2", lambda h: _reader(h).reset())
