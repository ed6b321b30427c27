"""Writing checkpoints: Tensorweave's format (safetensors data shards plus a JSON index), or TensorFlow's
(formats/tf_bundle.py) with the same guarantees, written atomically. Reading either: formats/checkpoint_reader.py
(its names are this module's too, so every caller has one module to go to).

A checkpoint with prefix ``P`` is ``P.data-00000-of-0000N-<random>`` (safetensors files holding the
tensors) and ``P.index`` (the manifest: for each saved name its dtype, full shape and the slices stored,
where each slice lives, plus each shard's size and CRC-32). Every file is written to a temporary name and
fsynced; under the directory lock the data files are renamed into place and then the index, so a
checkpoint exists exactly when its index does and a crash mid-save leaves earlier checkpoints as they
were. Reading verifies sizes and checksums and raises DataLossError naming the file. Who may delete what
when several processes write one directory: formats/checkpoint_files.py. See docs/checkpoint-format.md.
"""

import contextlib
import json
import os
import uuid
import zlib

import numpy as np
import safetensors.numpy as safetensors

from tensorweave import errors
from tensorweave.formats import checkpoint_files, tf_bundle
from tensorweave.formats.checkpoint_reader import (  # noqa: F401 - reading is part of this module's API
    _DATA_MARK, FORMAT, INDEX_SUFFIX, TENSORFLOW, TENSORWEAVE, CheckpointReader, bad_prefix_hint, exists, index_path,
    is_intact, looks_intact, read_index)
from tensorweave.formats.checkpoint_values import encode, parse_shape_and_slice

# ---- writing -----------------------------------------------------------------------------------------
def atomic_write(path, data):
    """Writes ``path`` whole or not at all (a temporary named after this writer, fsynced, renamed)."""
    tmp = _write_temporary(path, data)
    try:
        commit(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _write_temporary(path, data):
    tmp = checkpoint_files.temp_path(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def commit(tmp, path):
    """Renames a fully written file into place; the one step a crash can interrupt (tests inject it here)."""
    os.replace(tmp, path)


def _fsync_dir(path):
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_data(path, entries, shard):
    """Writes one safetensors shard of ``entries`` (name, shape_and_slice, array, DType) to a temporary of
    ``path``; returns (the temporary, its index body)."""
    tensors, stored = {}, {}
    for i, (name, spec, array, dtype) in enumerate(entries):
        full, extents = parse_shape_and_slice(spec)
        array = np.asarray(array)
        if extents is not None and tuple(n for _, n in extents) != array.shape:
            raise errors.InvalidArgumentError(None, None, (
                f"saving {name!r}: its value has shape {list(array.shape)} but shape_and_slice {spec!r} "
                f"describes a slice of shape {[n for _, n in extents]}"))
        entry = stored.setdefault(name, {"dtype": dtype.name, "shape": list(array.shape) if full is None else full,
                                         "slices": []})
        if entry["slices"] and (extents is None or entry["slices"][0]["extent"] is None
                                or entry["dtype"] != dtype.name or entry["shape"] != full):
            raise errors.InvalidArgumentError(None, None, (
                f"tensor {name!r} is saved twice in one checkpoint, or its slices disagree on dtype or full shape"))
        data, encoding, extra = encode(array, dtype)
        key = f"t{i}"
        tensors[key] = data
        entry["slices"].append(dict(key=key, shard=shard, encoding=encoding,
                                    extent=None if extents is None else [list(e) for e in extents], **extra))
    blob = safetensors.save(tensors, metadata={"format": FORMAT})
    tmp = _write_temporary(path, blob)
    return tmp, {"shards": {str(shard): {"file": os.path.basename(path), "size": len(blob), "crc32": zlib.crc32(blob)}},
                 "tensors": stored}


def _new_data_path(prefix, shard, num_shards):
    """Data files get a fresh suffix per save, so re-saving a prefix never touches the files its index uses."""
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}-{uuid.uuid4().hex[:8]}"


def _commit(prefix, index_data, moves):
    """Renames the data files into place (``moves``: [(where it is, its final path)]) and then the index
    (``index_data``), under the directory lock; then deletes the data of the version of ``prefix`` this one
    replaced. TensorFlow's data files have fixed names: when one is replaced, the old index goes first, so the
    old version stops existing rather than pointing at new data."""
    directory = os.path.dirname(os.path.abspath(prefix))
    with directory_lock(directory) as lock:
        replaced = [os.path.basename(p) for p in _data_files(prefix)]
        adding = [os.path.basename(final) for _, final in moves]
        journal = {"prefix": os.path.basename(prefix), "adding": adding, "replacing": replaced}
        lock.note(journal)
        try:
            if set(replaced) & set(adding):
                _remove(index_path(prefix))
            for source, final in moves:
                commit(source, final)
            atomic_write(index_path(prefix), index_data)
            _fsync_dir(prefix)
        except BaseException:
            _undo(directory, journal)
            for source, _ in moves:
                _remove(source)
            raise
        for name in set(replaced) - set(adding):
            _remove(os.path.join(directory, name))


@contextlib.contextmanager
def directory_lock(directory):
    """The directory lock, taken the way every writer takes it: first finishing or rolling back a commit
    whose writer died holding it, and removing what dead writers left."""
    with checkpoint_files.DirectoryLock(directory) as lock:
        if lock.unfinished:
            _undo(directory, lock.unfinished)
            lock.unfinished = None
        if lock.outermost:
            checkpoint_files.remove_stale(directory)
        yield lock


def _undo(directory, journal):
    """Finishes or rolls back a commit whose writer stopped part-way, by what the index names now."""
    named = _named_files(os.path.join(directory, journal["prefix"]))
    if named is None:
        return  # a damaged index: leave its files for whoever looks into it
    committed = set(journal["adding"]) <= named
    for name in set(journal["replacing"] if committed else journal["adding"]) - named:
        _remove(os.path.join(directory, name))


def _named_files(prefix):
    """The data files the index of ``prefix`` names (empty without an index), or None if it does not parse."""
    try:
        if tf_bundle.is_tf_checkpoint(prefix):
            shards = tf_bundle.BundleReader(prefix).num_shards
            return {os.path.basename(tf_bundle.data_path(prefix, i, shards)) for i in range(shards)}
        return {info["file"] for info in read_index(prefix)["shards"].values()}
    except errors.NotFoundError:
        return set()
    except errors.DataLossError:
        return None


def _index_bytes(body):
    body["num_shards"] = len(body["shards"])
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return json.dumps({"format": FORMAT, "crc32": zlib.crc32(text.encode()), "body": body},
                      sort_keys=True, separators=(",", ":")).encode()


def write_checkpoint(prefix, entries, checkpoint_format=TENSORWEAVE):
    """Writes a one-shard checkpoint at ``prefix`` in ``checkpoint_format`` ("tensorweave" or "tensorflow"):
    its data file, then (committing it) its index."""
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    if checkpoint_format == TENSORFLOW:
        final = tf_bundle.data_path(prefix, 0, 1)
        data, index = tf_bundle.shard_contents(entries, 0)
        _commit(prefix, tf_bundle.index_bytes(index, 1), [(_write_temporary(final, data), final)])
        return
    if checkpoint_format != TENSORWEAVE:
        raise errors.InvalidArgumentError(None, None, (
            f"unknown checkpoint format {checkpoint_format!r}: use {TENSORWEAVE!r} or {TENSORFLOW!r}"))
    final = _new_data_path(prefix, 0, 1)
    tmp, body = _write_data(final, entries, 0)
    _commit(prefix, _index_bytes(body), [(tmp, final)])


def merge_checkpoints(prefixes, destination, delete_old_dirs=True):
    """Makes one checkpoint of the one-shard checkpoints at ``prefixes`` (a sharded save's parts)."""
    os.makedirs(os.path.dirname(os.path.abspath(destination)), exist_ok=True)
    if prefixes and tf_bundle.is_tf_checkpoint(prefixes[0]):
        _merge_tf_bundles(prefixes, destination)
    else:
        _merge_own(prefixes, destination)
    for part in prefixes:
        _remove(index_path(part))
        if delete_old_dirs:  # the parts' directory is this save's own: its lock file goes with it
            parts_dir = os.path.dirname(os.path.abspath(part))
            _remove(os.path.join(parts_dir, checkpoint_files.DIRECTORY_LOCK))
            try:
                os.rmdir(parts_dir)
            except OSError:
                pass


def _merge_own(prefixes, destination):
    merged, moves = {"shards": {}, "tensors": {}}, []
    for i, part in enumerate(prefixes):
        body = read_index(part)
        (info,) = body["shards"].values()
        target = _new_data_path(destination, i, len(prefixes))
        moves.append((os.path.join(os.path.dirname(os.path.abspath(part)), info["file"]), target))
        merged["shards"][str(i)] = {**info, "file": os.path.basename(target)}
        for name, entry in body["tensors"].items():
            have = merged["tensors"].setdefault(name, {**entry, "slices": []})
            have["slices"].extend({**s, "shard": i} for s in entry["slices"])
    _commit(destination, _index_bytes(merged), moves)


def _merge_tf_bundles(prefixes, destination):
    indexes, moves = [], []
    for i, part in enumerate(prefixes):
        index, shards = tf_bundle.read_index_entries(part)
        if shards != 1:
            raise errors.InvalidArgumentError(None, None, f"checkpoint part {part!r} has {shards} shards, not one")
        indexes.append(index)
        moves.append((tf_bundle.data_path(part, 0, 1), tf_bundle.data_path(destination, i, len(prefixes))))
    _commit(destination, tf_bundle.index_bytes(tf_bundle.merge_indexes(indexes), len(prefixes)), moves)


def delete_checkpoint(prefix):
    """Removes a checkpoint: its index first (so it stops existing at once), then its data. Under the
    directory lock every data file of ``prefix`` not being written is this checkpoint's (data files get
    their final names only under the lock); the temporaries of another writer saving ``prefix`` are left."""
    with directory_lock(os.path.dirname(os.path.abspath(prefix))):
        _remove(index_path(prefix))
        for path in _data_files(prefix):
            _remove(path)


def _data_files(prefix):
    """The data files of ``prefix`` that are in place (not temporaries)."""
    directory = os.path.dirname(os.path.abspath(prefix))
    start = os.path.basename(prefix) + _DATA_MARK
    try:
        return [os.path.join(directory, f) for f in os.listdir(directory)
                if f.startswith(start) and not checkpoint_files.is_temporary(f)]
    except FileNotFoundError:
        return []


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
