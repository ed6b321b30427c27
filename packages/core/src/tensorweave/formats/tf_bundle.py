"""TensorFlow's checkpoint format, the tensor bundle (V2): a ``<prefix>.index`` table (formats/leveldb_table.py)
of protos (protos/tensor_bundle.py) and ``<prefix>.data-NNNNN-of-NNNNN`` shards of raw tensor bytes.

The entry under the empty key is the header (shard count, endianness, version); every other entry says where
one tensor's bytes are and their masked CRC32C. Numbers are stored little-endian as they are in memory;
strings as the varint lengths, a masked CRC32C of the lengths, then the bytes. A variable saved in
partitions has an entry listing its slices, and each slice an entry under a key encoded from the name and
the slice (TF's ``EncodeTensorNameSlice``, ordered-code). Writing produces the bytes here; committing them
(temporaries, fsync, renames under the directory lock) is checkpoint_format's.
"""

import os
import struct

import crc32c
import numpy as np

from tensorweave import dtypes, errors
from tensorweave.formats import leveldb_table
from tensorweave.formats.checkpoint_values import index_of, parse_shape_and_slice
from tensorweave.protos import framework, tensor_bundle
from tensorweave.records.format import mask

INDEX_SUFFIX = ".index"
BUNDLE_VERSION = 1  # TF's kTensorBundleVersion; it reads bundles whose min_consumer is at most this


def is_tf_checkpoint(prefix):
    """Whether ``<prefix>.index`` is a table (TensorFlow's format) rather than Tensorweave's JSON index."""
    return leveldb_table.has_magic(os.fspath(prefix) + INDEX_SUFFIX)


def data_path(prefix, shard, num_shards):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


# ---- slice keys (TF's ordered-code encoding of (name, slice)) --------------------------------------
def _num_increasing(value):
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(raw)]) + raw


def _string_increasing(text):
    return text.replace(b"\xff", b"\xff\x00").replace(b"\x00", b"\x00\xff") + b"\x00\x01"


_HEADER_BITS = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0), (0xFE, 0), (0xFF, 0),
                (0xFF, 0x80), (0xFF, 0xC0)]


def _signed_increasing(value):
    magnitude = ~value if value < 0 else value
    length = 10 if magnitude >> 62 else max(1, -(-(magnitude.bit_length() + 1) // 7))
    raw = bytearray((value & ((1 << (8 * length)) - 1)).to_bytes(length, "big"))
    raw[0] ^= _HEADER_BITS[length][0]
    if length > 1:
        raw[1] ^= _HEADER_BITS[length][1]
    return bytes(raw)


def slice_key(name, extents):
    """The index key of one saved slice of ``name``: ``extents`` are (start, length), length -1 for a whole dim."""
    key = _num_increasing(0) + _string_increasing(name.encode()) + _num_increasing(len(extents))
    return key + b"".join(_signed_increasing(s) + _signed_increasing(n) for s, n in extents)


def _extents(slice_proto, shape):
    """[(start, length)] of a TensorSliceProto, a whole dim as (0, its size); and TF's key form (length -1)."""
    full = [(e.start, e.length if e.HasField("length") else shape[d]) for d, e in enumerate(slice_proto.extent)]
    keyed = [(e.start, e.length if e.HasField("length") else -1) for e in slice_proto.extent]
    return full, keyed


# ---- tensor bytes ----------------------------------------------------------------------------------
def _varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _strings_crc(items, lengths_check=None):
    """TF's CRC32C of a string tensor: over each length as a 32-bit word (64-bit past 4 GiB), then the lengths'
    masked check (``lengths_check``; None: the CRC so far, for writing it), then the bytes."""
    crc = 0
    for v in items:
        crc = crc32c.crc32c(struct.pack("<I" if len(v) <= 0xFFFFFFFF else "<Q", len(v)), crc)
    if lengths_check is None:
        return crc
    crc = crc32c.crc32c(lengths_check, crc)
    for v in items:
        crc = crc32c.crc32c(v, crc)
    return crc


def encode(array, dtype):
    """(bytes, masked CRC32C) of one tensor as a data shard stores it."""
    if dtype is dtypes.string:
        items = [v if isinstance(v, bytes) else str(v).encode() for v in np.asarray(array, dtype=object).reshape(-1)]
        lengths_check = struct.pack("<I", mask(_strings_crc(items)))
        data = b"".join(_varint(len(v)) for v in items) + lengths_check + b"".join(items)
        return data, mask(_strings_crc(items, lengths_check))
    if dtype not in _NUMPY:
        raise errors.UnimplementedError(None, None, f"TensorFlow's checkpoint format does not store {dtype.name}")
    data = np.ascontiguousarray(array, dtype=_NUMPY[dtype]).tobytes()
    return data, mask(crc32c.crc32c(data))


def _decode_strings(data, count, where):
    pos, lengths = 0, []
    for _ in range(count):
        value = shift = 0
        while True:
            if pos >= len(data):
                raise errors.DataLossError(None, None, f"{where}: the string lengths run past the tensor's bytes")
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        lengths.append(value)
    pos += 4  # the lengths' checksum, covered by the entry's CRC32C
    if pos + sum(lengths) != len(data):
        raise errors.DataLossError(None, None, f"{where}: the string lengths do not add up to the tensor's bytes")
    out = np.empty(count, dtype=object)
    for i, n in enumerate(lengths):
        out[i] = data[pos:pos + n]
        pos += n
    return out


_NUMPY = {d: np.dtype(d.as_numpy_dtype).newbyteorder("<") for d in (
    dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16, dtypes.int32,
    dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.bool, dtypes.complex64,
    dtypes.complex128)}
_NAMES = {number: label[3:].lower() for label, number in framework.DATA_TYPES.items()}


class BundleReader:
    """Reads one TensorFlow checkpoint, checking the index's blocks and each tensor's CRC32C as it is read."""

    def __init__(self, prefix):
        self.prefix = os.fspath(prefix)
        self._index = self.prefix + INDEX_SUFFIX
        self._files, self._entries, self._slices, header = {}, {}, {}, None
        for key, value in leveldb_table.read_table(self._index):
            try:
                if key == b"":
                    header = tensor_bundle.BundleHeaderProto.FromString(value)
                elif key.startswith(b"\x00"):
                    self._slices[key] = tensor_bundle.BundleEntryProto.FromString(value)
                else:
                    self._entries[key.decode()] = tensor_bundle.BundleEntryProto.FromString(value)
            except Exception:  # noqa: BLE001 - a proto or a name that does not parse is data loss
                raise errors.DataLossError(None, None, (
                    f"checkpoint index {self._index!r}: the entry under key {key!r} does not parse")) from None
        self._check_header(header)
        self.num_shards = header.num_shards

    def _check_header(self, header):
        if header is None:
            raise errors.DataLossError(None, None, f"checkpoint index {self._index!r} has no header entry")
        if header.endianness != tensor_bundle.BundleHeaderProto.LITTLE:
            raise errors.UnimplementedError(None, None, (
                f"checkpoint {self.prefix!r} was written on a big-endian machine; Tensorweave reads little-endian "
                f"TensorFlow checkpoints only"))
        if header.version.min_consumer > BUNDLE_VERSION or BUNDLE_VERSION in header.version.bad_consumers:
            raise errors.UnimplementedError(None, None, (
                f"checkpoint {self.prefix!r} needs a reader of tensor bundle version {header.version.min_consumer} "
                f"or later; this one reads version {BUNDLE_VERSION}"))
        if header.num_shards < 1:
            raise errors.DataLossError(None, None, f"checkpoint index {self._index!r} says it has no data shards")

    def _dtype(self, name, entry):
        try:
            return dtypes.as_dtype(entry.dtype)
        except (TypeError, ValueError):
            raise errors.UnimplementedError(None, None, (
                f"{name!r} in checkpoint {self.prefix!r} is of dtype {_NAMES.get(entry.dtype, entry.dtype)}, which "
                f"Tensorweave does not have")) from None

    def variable_to_shape_map(self):
        return {name: [d.size for d in e.shape.dim] for name, e in self._entries.items()}

    def variable_to_dtype_map(self):
        return {name: self._dtype(name, e) for name, e in self._entries.items()}

    def dtype_of(self, name):
        return self._dtype(name, self._entry(name))

    def has_tensor(self, name):
        return name in self._entries

    def debug_string(self):
        return "".join(f"{n} ({_NAMES.get(e.dtype, e.dtype)}) {[d.size for d in e.shape.dim]}\n"
                       for n, e in sorted(self._entries.items()))

    def verify(self):
        """Reads every tensor, raising DataLossError for the first whose bytes are missing or corrupted."""
        for name in self._entries:
            self.get_tensor(name)

    def _shard(self, shard):
        f = self._files.get(shard)
        if f is None:
            path = data_path(self.prefix, shard, self.num_shards)
            try:
                f = self._files[shard] = open(path, "rb")
            except FileNotFoundError:
                raise errors.DataLossError(None, None, (
                    f"checkpoint data file {path!r} is missing; checkpoint {self.prefix!r} is incomplete")) from None
        return f

    def _read(self, name, entry, shape):
        """The value an entry with bytes (a whole tensor or one slice) holds, its CRC32C checked."""
        dtype = self._dtype(name, entry)
        if not 0 <= entry.shard_id < self.num_shards:
            raise errors.DataLossError(None, None, (
                f"checkpoint index {self._index!r} puts {name!r} in shard {entry.shard_id} of {self.num_shards}"))
        f = self._shard(entry.shard_id)
        f.seek(entry.offset)
        data = f.read(entry.size)
        where = f"checkpoint data file {f.name!r}, tensor {name!r}"
        if len(data) != entry.size:
            raise errors.DataLossError(None, None, (
                f"{where}: the file ends before the tensor's {entry.size} bytes at offset {entry.offset}; it is "
                f"truncated"))
        count = int(np.prod(shape, dtype=np.int64))
        if dtype is dtypes.string:
            strings = _decode_strings(data, count, where)
            check_at = len(data) - sum(len(v) for v in strings) - 4
            expected = mask(_strings_crc(strings, data[check_at:check_at + 4]))
        else:
            expected = mask(crc32c.crc32c(data))
        if expected != entry.crc32c:
            raise errors.DataLossError(None, None, f"{where}: its bytes fail their CRC32C check; the file is corrupted")
        if dtype is dtypes.string:
            return strings.reshape(shape)
        if dtype not in _NUMPY or count * _NUMPY[dtype].itemsize != len(data):
            raise errors.DataLossError(None, None, f"{where}: {len(data)} bytes do not hold {dtype.name} {shape}")
        return np.frombuffer(data, _NUMPY[dtype]).astype(dtype.as_numpy_dtype).reshape(shape)

    def _entry(self, name):
        entry = self._entries.get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, f"key {name!r} not found in checkpoint {self.prefix!r}")
        return entry

    def _stored_slices(self, name, entry):
        """[(extents, slice entry)] of a variable saved in partitions."""
        shape = [d.size for d in entry.shape.dim]
        out = []
        for proto in entry.slices:
            extents, keyed = _extents(proto, shape)
            stored = self._slices.get(slice_key(name, keyed))
            if stored is None:
                raise errors.DataLossError(None, None, (
                    f"checkpoint index {self._index!r} lists a slice {extents} of {name!r} but has no entry for it"))
            out.append((extents, stored))
        return out

    def get_tensor(self, name):
        """The full value saved under ``name`` (assembled from its slices when it was saved in partitions)."""
        entry = self._entry(name)
        shape = [d.size for d in entry.shape.dim]
        if not entry.slices:
            return self._read(name, entry, shape)
        dtype = self._dtype(name, entry)
        full = np.zeros(shape, dtype=dtype.as_numpy_dtype)
        covered = 0
        for extents, stored in self._stored_slices(name, entry):
            value = self._read(name, stored, [n for _, n in extents])
            full[index_of(extents)] = value
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
        shape = [d.size for d in entry.shape.dim]
        if full_shape != shape:
            raise errors.InvalidArgumentError(None, None, (
                f"{name!r} has shape {shape} in checkpoint {self.prefix!r}, but a slice of a tensor of shape "
                f"{full_shape} was requested"))
        if entry.slices:
            for stored_extents, stored in self._stored_slices(name, entry):
                if stored_extents == list(extents):
                    return self._read(name, stored, [n for _, n in extents])
        return self.get_tensor(name)[index_of(extents)].copy()

    def close(self):
        for f in self._files.values():
            f.close()
        self._files.clear()

    def __del__(self):
        self.close()


# ---- writing ---------------------------------------------------------------------------------------
def _shape_proto(shape):
    return framework.TensorShapeProto(dim=[framework.TensorShapeProto.Dim(size=int(n)) for n in shape])


def shard_contents(entries, shard):
    """(data bytes, {index key: BundleEntryProto}) of one shard holding ``entries`` (name, shape_and_slice,
    array, DType); a sliced variable's whole-tensor entry lists the slices this shard holds."""
    data, index = bytearray(), {}
    for name, spec, array, dtype in entries:
        array = np.asarray(array)
        full, extents = parse_shape_and_slice(spec)
        if extents is not None and tuple(n for _, n in extents) != array.shape:
            raise errors.InvalidArgumentError(None, None, (
                f"saving {name!r}: its value has shape {list(array.shape)} but shape_and_slice {spec!r} describes "
                f"a slice of shape {[n for _, n in extents]}"))
        raw, crc = encode(array, dtype)
        stored = tensor_bundle.BundleEntryProto(dtype=dtype.as_datatype_enum, shape=_shape_proto(array.shape),
                                                shard_id=shard, offset=len(data), size=len(raw), crc32c=crc)
        data += raw
        if extents is None:
            key = name.encode()
        else:
            whole_dims = [text == "-" for text in spec.split()[-1].split(":")]  # '-' has no length, as in TF
            keyed = [(s, -1 if whole else n) for (s, n), whole in zip(extents, whole_dims)]
            key = slice_key(name, keyed)
            whole = index.setdefault(name.encode(), tensor_bundle.BundleEntryProto(
                dtype=dtype.as_datatype_enum, shape=_shape_proto(full)))
            whole.slices.add().CopyFrom(_slice_proto(keyed))
        if key in index:
            raise errors.InvalidArgumentError(None, None, f"tensor {name!r} is saved twice in one checkpoint")
        index[key] = stored
    return bytes(data), index


def _slice_proto(keyed):
    proto = tensor_bundle.TensorSliceProto()
    for start, length in keyed:
        extent = proto.extent.add(start=start)
        if length != -1:
            extent.length = length
    return proto


def read_index_entries(prefix):
    """({index key: BundleEntryProto}, number of shards) of a checkpoint's index, for merging shards."""
    reader = BundleReader(prefix)
    index = {name.encode(): e for name, e in reader._entries.items()}
    index.update(reader._slices)
    return index, reader.num_shards


def merge_indexes(parts):
    """One index of the per-shard indexes ``parts`` ([{key: entry}], shard i's entries moved to shard i):
    the slice lists of a variable partitioned across shards are joined."""
    merged = {}
    for shard, index in enumerate(parts):
        for key, entry in index.items():
            entry = tensor_bundle.BundleEntryProto.FromString(entry.SerializeToString())
            if entry.slices:
                have = merged.get(key)
                if have is not None:
                    if have.dtype != entry.dtype or have.shape != entry.shape:
                        raise errors.InvalidArgumentError(None, None, (
                            f"the shards of a sharded save disagree on the dtype or shape of {key.decode()!r}"))
                    have.slices.extend(entry.slices)
                    continue
            else:
                entry.shard_id = shard
                if key in merged:
                    raise errors.InvalidArgumentError(None, None, (
                        f"tensor {key!r} is saved by two shards of one sharded save"))
            merged[key] = entry
    return merged


def index_bytes(index, num_shards):
    """The ``.index`` table of ``index`` ({key: BundleEntryProto}) with its header."""
    header = tensor_bundle.BundleHeaderProto(num_shards=num_shards, endianness=tensor_bundle.BundleHeaderProto.LITTLE,
                                             version=framework.VersionDef(producer=BUNDLE_VERSION))
    items = [(b"", header.SerializeToString())]
    items += [(key, index[key].SerializeToString(deterministic=True)) for key in sorted(index)]
    return leveldb_table.table_bytes(items)


def looks_intact(prefix):
    """The cheap check: the index's blocks pass their CRC32Cs and every data file is long enough for the
    tensors it holds (each tensor's CRC32C is checked when it is read)."""
    try:
        reader = BundleReader(prefix)
    except errors.OpError:
        return False
    ends = {}
    for entry in [*reader._entries.values(), *reader._slices.values()]:
        if not entry.slices:
            ends[entry.shard_id] = max(ends.get(entry.shard_id, 0), entry.offset + entry.size)
    for shard in range(reader.num_shards):
        path = data_path(reader.prefix, shard, reader.num_shards)
        if not os.path.isfile(path) or os.path.getsize(path) < ends.get(shard, 0):
            return False
    return True
