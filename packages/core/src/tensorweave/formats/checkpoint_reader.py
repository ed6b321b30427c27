"""Reading checkpoints of either format: Tensorweave's own (safetensors data shards and a JSON index,
formats/checkpoint_format.py writes them) and TensorFlow's tensor bundle (formats/tf_bundle.py), told apart by
the index (TensorFlow's is a LevelDB table ending with its magic number), so every reader (RestoreV2,
NewCheckpointReader, init_from_checkpoint, latest_checkpoint) takes either. Reading verifies sizes and
checksums and raises DataLossError naming the file.
"""

import json
import os
import threading
import time
import zlib

import numpy as np
import safetensors.numpy as safetensors

from tensorweave import dtypes, errors
from tensorweave.formats import tf_bundle
from tensorweave.formats.checkpoint_values import decode, index_of, parse_shape_and_slice

FORMAT = "tensorweave-checkpoint/1"
TENSORWEAVE, TENSORFLOW = "tensorweave", "tensorflow"  # the formats a Saver writes (checkpoint_format=...)
INDEX_SUFFIX = ".index"
_DATA_MARK = ".data-"


def index_path(prefix):
    return prefix + INDEX_SUFFIX


def exists(prefix):
    return os.path.isfile(index_path(prefix))


def bad_prefix_hint(path):
    """Why ``path`` is not a checkpoint prefix and what to pass instead, or None if it may be one."""
    path = os.fspath(path)
    if path.endswith(INDEX_SUFFIX):
        return (f"{path!r} is the index file of a checkpoint; pass its prefix "
                f"{path[:-len(INDEX_SUFFIX)]!r} (the path without '.index')")
    if _DATA_MARK in os.path.basename(path):
        return (f"{path!r} is a data file of a checkpoint; pass its prefix {path[:path.rindex(_DATA_MARK)]!r} "
                f"(the path without '.data-...')")
    if os.path.isdir(path):
        return (f"{path!r} is a directory; pass a checkpoint prefix such as "
                f"tf.train.latest_checkpoint({path!r}) (e.g. '{os.path.join(path, 'model.ckpt-100')}')")
    return None


# ---- reading -----------------------------------------------------------------------------------------
def read_index(prefix):
    path = index_path(prefix)
    if not os.path.isfile(path):
        hint = bad_prefix_hint(prefix)
        raise errors.NotFoundError(None, None, hint or f"no checkpoint at prefix {prefix!r}: {path!r} does not exist")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw)
        body = doc["body"]
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        ok = doc.get("format") == FORMAT and doc["crc32"] == zlib.crc32(text.encode())
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise errors.DataLossError(None, None, (
            f"checkpoint index {path!r} is truncated or corrupted (it does not parse or its checksum does not "
            f"match); restore an earlier checkpoint, e.g. from tf.train.get_checkpoint_state(dir)"))
    return body


_verified = {}  # data file versions whose CRC-32 held: (path, device, inode, size, mtime, ctime, crc) -> True
_verified_lock = threading.Lock()
_SETTLED_SECONDS = 2.0  # file times are coarse (a few ms): a version younger than this may still change unseen


def looks_intact(prefix):
    """The cheap check: the index parses and its checksums hold, and every data file is there, as long as the
    index says."""
    if tf_bundle.is_tf_checkpoint(prefix):
        return tf_bundle.looks_intact(prefix)
    try:
        body = read_index(prefix)
    except errors.OpError:
        return False
    directory = os.path.dirname(os.path.abspath(prefix))
    for info in body["shards"].values():
        path = os.path.join(directory, info["file"])
        if not os.path.isfile(path) or os.path.getsize(path) != info["size"]:
            return False
    return True


def is_intact(prefix):
    """Whether the index of ``prefix`` checks and every data file has the size and CRC-32 it records (for
    TensorFlow's format, the cheap check: its tensors' CRC32Cs are checked as they are read).

    Each version of a data file is read once: its identity, size and times are remembered once they are
    settled, and writing or replacing the file changes them, so it is read again."""
    if tf_bundle.is_tf_checkpoint(prefix):
        return tf_bundle.looks_intact(prefix)
    try:
        body = read_index(prefix)
    except errors.OpError:
        return False
    directory = os.path.dirname(os.path.abspath(prefix))
    return all(_data_file_intact(os.path.join(directory, info["file"]), info) for info in body["shards"].values())


def _data_file_intact(path, info):
    try:
        f = open(path, "rb")
    except OSError:
        return False
    with f:
        before = os.fstat(f.fileno())
        if before.st_size != info["size"]:
            return False
        key = (path, before.st_dev, before.st_ino, before.st_size, before.st_mtime_ns, before.st_ctime_ns,
               info["crc32"])
        if key in _verified:
            return True
        crc = 0
        while chunk := f.read(8 << 20):
            crc = zlib.crc32(chunk, crc)
        after = os.fstat(f.fileno())
    if crc != info["crc32"]:
        return False
    settled = time.time() - max(after.st_mtime, after.st_ctime) > _SETTLED_SECONDS
    if settled and (after.st_mtime_ns, after.st_ctime_ns) == (before.st_mtime_ns, before.st_ctime_ns):
        with _verified_lock:
            if len(_verified) > 4096:
                _verified.clear()
            _verified[key] = True
    return True


class CheckpointReader:
    """Reads one checkpoint of either format, told apart by its index (TensorFlow's is a LevelDB table)."""

    def __init__(self, prefix):
        self.prefix = os.fspath(prefix)
        self.format = TENSORFLOW if tf_bundle.is_tf_checkpoint(self.prefix) else TENSORWEAVE
        self._store = tf_bundle.BundleReader(self.prefix) if self.format == TENSORFLOW else _OwnCheckpoint(self.prefix)

    def variable_to_shape_map(self):
        return self._store.variable_to_shape_map()

    def variable_to_dtype_map(self):
        return self._store.variable_to_dtype_map()

    def dtype_of(self, name):
        """The DType of ``name`` (without asking about the others, some of which may have no Tensorweave dtype)."""
        return self._store.dtype_of(name)

    def has_tensor(self, name):
        return self._store.has_tensor(name)

    def debug_string(self):
        return self._store.debug_string()

    def verify(self):
        self._store.verify()

    def get_tensor(self, name):
        return self._store.get_tensor(name)

    def get_slice(self, name, spec):
        return self._store.get_slice(name, spec)


class _OwnCheckpoint:
    """Reads one checkpoint of Tensorweave's format, verifying each data file's size and CRC-32 before any
    value is used."""

    def __init__(self, prefix):
        self.prefix = os.fspath(prefix)
        self._body = read_index(self.prefix)
        self._directory = os.path.dirname(os.path.abspath(self.prefix))
        self._shards = {}

    def variable_to_shape_map(self):
        return {name: list(e["shape"]) for name, e in self._body["tensors"].items()}

    def variable_to_dtype_map(self):
        return {name: dtypes.as_dtype(e["dtype"]) for name, e in self._body["tensors"].items()}

    def dtype_of(self, name):
        return dtypes.as_dtype(self._entry(name)["dtype"])

    def has_tensor(self, name):
        return name in self._body["tensors"]

    def debug_string(self):
        return "".join(f"{n} ({e['dtype']}) {e['shape']}\n" for n, e in sorted(self._body["tensors"].items()))

    def verify(self):
        """Reads every shard, raising DataLossError for the first truncated or corrupted one."""
        for shard in self._body["shards"]:
            self._shard(shard)

    def _shard(self, shard):
        shard = str(shard)
        loaded = self._shards.get(shard)
        if loaded is None:
            info = self._body["shards"][shard]
            path = os.path.join(self._directory, info["file"])
            try:
                with open(path, "rb") as f:
                    blob = f.read()
            except FileNotFoundError:
                raise errors.DataLossError(None, None, (
                    f"checkpoint data file {path!r} is missing; checkpoint {self.prefix!r} is incomplete")) from None
            if len(blob) != info["size"]:
                raise errors.DataLossError(None, None, (
                    f"checkpoint data file {path!r} is truncated or overwritten: it has {len(blob)} bytes, the "
                    f"index records {info['size']}"))
            if zlib.crc32(blob) != info["crc32"]:
                raise errors.DataLossError(None, None, (
                    f"checkpoint data file {path!r} is corrupted: its CRC-32 does not match the index"))
            try:
                loaded = self._shards[shard] = safetensors.load(blob)
            except Exception as e:  # noqa: BLE001 - any parse failure is data loss
                raise errors.DataLossError(None, None, f"checkpoint data file {path!r} does not parse: {e}") from None
        return loaded

    def _entry(self, name):
        entry = self._body["tensors"].get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, f"key {name!r} not found in checkpoint {self.prefix!r}")
        return entry

    def _slice_value(self, entry, stored_slice):
        shape = [n for _, n in stored_slice["extent"]] if stored_slice["extent"] is not None else entry["shape"]
        return decode(self._shard(stored_slice["shard"])[stored_slice["key"]], stored_slice, shape)

    def get_tensor(self, name):
        """The full value saved under ``name`` (assembled from its slices when it was saved in parts)."""
        entry = self._entry(name)
        slices = entry["slices"]
        if len(slices) == 1 and slices[0]["extent"] is None:
            return self._slice_value(entry, slices[0])
        dtype = dtypes.as_dtype(entry["dtype"])
        full = np.zeros(entry["shape"], dtype=dtype.as_numpy_dtype)
        covered = 0
        for s in slices:
            value = self._slice_value(entry, s)
            full[index_of(s["extent"])] = value
            covered += value.size
        if covered != full.size:
            raise errors.DataLossError(None, None, (
                f"checkpoint {self.prefix!r} holds only {covered} of the {full.size} elements of {name!r}"))
        return full

    def get_slice(self, name, spec):
        """The part of ``name`` that a TF shape_and_slice string selects ('' for all of it)."""
        entry = self._entry(name)
        full_shape, extents = parse_shape_and_slice(spec)
        if extents is None:
            return self.get_tensor(name)
        if full_shape != entry["shape"]:
            raise errors.InvalidArgumentError(None, None, (
                f"{name!r} has shape {entry['shape']} in checkpoint {self.prefix!r}, but a slice of a tensor of "
                f"shape {full_shape} was requested"))
        for s in entry["slices"]:
            if s["extent"] == [list(e) for e in extents]:
                return self._slice_value(entry, s)
        return self.get_tensor(name)[index_of(extents)].copy()
