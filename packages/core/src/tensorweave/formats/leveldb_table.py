"""LevelDB's immutable sorted table (SSTable), the container of a TensorFlow checkpoint's ``.index`` file.

A table is data blocks of sorted key/value entries (keys prefix-compressed against the previous one, with a
restart point every few entries where the whole key is stored), an index block (one entry per data block:
a key at least its last key -> the block's offset and size), a metaindex block (empty here) and a 48-byte
footer (the two blocks' handles, padded, then the magic number). Each block is followed by its compression
type (1 byte) and the masked CRC32C of the block and that byte. TensorFlow writes its tables uncompressed.
"""

import struct

import crc32c

from tensorweave import errors
from tensorweave.records.format import mask

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
TRAILER_SIZE = 5  # compression type, masked CRC32C
NO_COMPRESSION, SNAPPY = 0, 1
RESTART_INTERVAL = 16
BLOCK_SIZE = 256 << 10  # TensorFlow's bundle writer starts a new data block past this size


def has_magic(path):
    """Whether ``path`` ends with a table footer's magic number (it may still be damaged elsewhere)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            if f.tell() < FOOTER_SIZE:
                return False
            f.seek(-8, 2)
            return struct.unpack("<Q", f.read(8))[0] == MAGIC
    except OSError:
        return False


# ---- reading ---------------------------------------------------------------------------------------
def _varint(data, pos, where):
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _damaged(where, "a length field runs past its block")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _damaged(where, what):
    return errors.DataLossError(None, None, (
        f"{where} is not a valid table: {what}. The file is truncated or corrupted; restore it from a copy or use "
        f"an earlier checkpoint"))


def _block(data, handle, where):
    """The contents of the block at ``handle`` (offset, size), its CRC checked."""
    offset, size = handle
    if offset + size + TRAILER_SIZE > len(data) - FOOTER_SIZE:
        raise _damaged(where, f"a block at offset {offset} of {size} bytes runs past the end of the file")
    contents, kind = data[offset:offset + size], data[offset + size]
    (stored,) = struct.unpack_from("<I", data, offset + size + 1)
    if mask(crc32c.crc32c(data[offset:offset + size + 1])) != stored:
        raise errors.DataLossError(None, None, (
            f"{where}: the block at offset {offset} fails its CRC32C check; the file is corrupted. Restore it from "
            f"a copy or use an earlier checkpoint"))
    if kind == SNAPPY:
        raise errors.UnimplementedError(None, None, (
            f"{where} has snappy-compressed blocks, which Tensorweave does not read (TensorFlow writes checkpoint "
            f"indexes uncompressed; this table was written by another tool). Rewrite it uncompressed, e.g. by "
            f"restoring and saving it with TensorFlow"))
    if kind != NO_COMPRESSION:
        raise _damaged(where, f"a block has the unknown compression type {kind}")
    return contents


def _entries(block, where):
    """The (key, value) pairs of one block, keys rebuilt from their shared prefixes."""
    if len(block) < 4:
        raise _damaged(where, "a block is too short to hold its restart count")
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 - 4 * restarts
    if restarts < 1 or limit < 0:
        raise _damaged(where, f"a block's restart count {restarts} does not fit it")
    pos, key, out = 0, b"", []
    while pos < limit:
        shared, pos = _varint(block, pos, where)
        unshared, pos = _varint(block, pos, where)
        value_length, pos = _varint(block, pos, where)
        if shared > len(key) or pos + unshared + value_length > limit:
            raise _damaged(where, "an entry runs past its block")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        out.append((key, block[pos:pos + value_length]))
        pos += value_length
    return out


def _handle(data, pos, where):
    offset, pos = _varint(data, pos, where)
    size, pos = _varint(data, pos, where)
    return (offset, size), pos


def read_table(path):
    """Every (key, value) of the table at ``path``, in key order; DataLossError names the file if it is
    truncated or corrupted, NotFoundError if it is missing."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"checkpoint index {path!r} does not exist") from None
    return read_table_bytes(data, path)


def read_table_bytes(data, path):
    """Every (key, value) of the table ``data`` (read from ``path``, which errors name)."""
    if len(data) < FOOTER_SIZE or struct.unpack_from("<Q", data, len(data) - 8)[0] != MAGIC:
        raise _damaged(path, f"it is {len(data)} bytes long and does not end with the table magic number")
    footer = data[len(data) - FOOTER_SIZE:]
    _, pos = _handle(footer, 0, path)  # the metaindex: TensorFlow's tables have no filter to look up
    index_handle, _ = _handle(footer, pos, path)
    out = []
    for _, value in _entries(_block(data, index_handle, path), path):
        out.extend(_entries(_block(data, _handle(value, 0, path)[0], path), path))
    if any(a >= b for (a, _), (b, _) in zip(out, out[1:])):
        raise _damaged(path, "its keys are not in increasing order")
    return out


# ---- writing ---------------------------------------------------------------------------------------
def _put_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _build_block(items, restart_interval):
    body, restarts, previous = bytearray(), [], b""
    for i, (key, value) in enumerate(items):
        shared = 0
        if i % restart_interval:
            limit = min(len(key), len(previous))
            while shared < limit and key[shared] == previous[shared]:
                shared += 1
        else:
            restarts.append(len(body))
        body += _put_varint(shared) + _put_varint(len(key) - shared) + _put_varint(len(value))
        body += key[shared:] + value
        previous = key
    restarts = restarts or [0]
    return bytes(body) + struct.pack(f"<{len(restarts)}I", *restarts) + struct.pack("<I", len(restarts))


def _with_trailer(block):
    kind = bytes([NO_COMPRESSION])
    return block + kind + struct.pack("<I", mask(crc32c.crc32c(block + kind)))


def table_bytes(items):
    """A table holding ``items`` ((key bytes, value bytes), keys strictly increasing), uncompressed."""
    items = list(items)
    if any(a >= b for (a, _), (b, _) in zip(items, items[1:])):
        raise ValueError("table keys must be strictly increasing")
    out, index = bytearray(), []
    start = 0
    while start < len(items):
        end, size = start, 0
        while end < len(items) and (end == start or size < BLOCK_SIZE):
            size += len(items[end][0]) + len(items[end][1]) + 8
            end += 1
        block = _build_block(items[start:end], RESTART_INTERVAL)
        index.append((items[end - 1][0], _put_varint(len(out)) + _put_varint(len(block))))
        out += _with_trailer(block)
        start = end
    meta = _build_block([], 1)
    meta_handle = _put_varint(len(out)) + _put_varint(len(meta))
    out += _with_trailer(meta)
    index_block = _build_block(index, 1)
    index_handle = _put_varint(len(out)) + _put_varint(len(index_block))
    out += _with_trailer(index_block)
    footer = meta_handle + index_handle
    out += footer + bytes(FOOTER_SIZE - 8 - len(footer)) + struct.pack("<Q", MAGIC)
    return bytes(out)
