"""CRC32C of many records of one length at once, for verifying big event files without a Python call per record.

Neither ``crc32c`` nor ``google-crc32c`` takes a batch of small buffers, and a call per record costs more
than the checksum itself. CRC32C is affine over GF(2): for messages of length L,

    crc(d) = crc(first) ^ XOR_j (T_j[d_j] ^ T_j[first_j])

where T_j[v] is what byte value v at position j contributes. So only the byte columns that differ between
the records cost anything (in event files of scalars: wall time, step and value; the tag and the framing
bytes are the same in every record), and two adjacent columns are looked up at once in a 65,536-entry
table. The tables are derived from the ``crc32c`` package's own results, not from a hand-written polynomial.
"""

import functools

import crc32c
import numpy as np

from tensorweave.extension import record_format

MASK_DELTA = record_format.MASK_DELTA


@functools.lru_cache(maxsize=1)
def _byte_table():
    """T[v]: the CRC32C contribution of byte v as a message's last byte (the CRC's linear part)."""
    zero = crc32c.crc32c(b"\0")
    return np.array([crc32c.crc32c(bytes([v])) ^ zero for v in range(256)], dtype=np.uint32)


@functools.lru_cache(maxsize=32)
def _position_tables(length):
    """(length, 256) contributions of each byte value at each position: one more zero byte after a
    position advances its contribution by one step of the CRC register."""
    last = _byte_table()
    tables = np.empty((length, 256), dtype=np.uint32)
    tables[-1] = last
    for j in range(length - 1, 0, -1):
        tables[j - 1] = (tables[j] >> 8) ^ last[tables[j] & 0xFF]
    return tables


@functools.lru_cache(maxsize=32)  # 256 KB each: the tables of a couple of record lengths
def _pair_table(length, j):
    """Contribution of the little-endian uint16 at positions j, j+1 of a length-``length`` message."""
    tables = _position_tables(length)
    return (tables[j + 1][:, None] ^ tables[j][None, :]).ravel()


def column(buf, pos, stride, count, dtype, at):
    """The field of type ``dtype`` at byte ``at`` of each of ``count`` records (record i at
    ``pos + i * stride`` in ``buf``), as a strided view (no copy)."""
    return np.ndarray((count,), dtype=dtype, buffer=buf, offset=pos + at, strides=(stride,))


def varying_columns(buf, pos, stride, count, length):
    """Bool per byte position of the records: whether any record's byte there differs from the first's."""
    varying = np.zeros(length, dtype=bool)
    if count < 2 or length == 0:
        return varying
    if length < 8:
        for j in range(length):
            col = column(buf, pos, stride, count, np.uint8, j)
            varying[j] = bool((col != col[0]).any())
        return varying
    for at in sorted({*range(0, length - 7, 8), length - 8}):  # 8-byte words covering every position
        words = column(buf, pos, stride, count, "<u8", at)
        diff = int(np.bitwise_or.reduce(words ^ words[0]))
        for b in range(8):
            if diff >> (8 * b) & 0xFF:
                varying[at + b] = True
    return varying


def crc32c_many(buf, pos, stride, count, length, varying=None):
    """CRC32C (unmasked) of each of ``count`` records of ``length`` bytes, record i at ``pos + i * stride``."""
    first = bytes(buf[pos:pos + length])
    if varying is None:
        varying = varying_columns(buf, pos, stride, count, length)
    out = np.full(count, crc32c.crc32c(first), dtype=np.uint32)
    j = 0
    while j < length:  # each varying column with its right neighbour, looked up in one 16-bit table
        if not varying[j]:
            j += 1
        elif j + 1 < length:
            table = _pair_table(length, j)
            out ^= table[first[j] | first[j + 1] << 8]
            out ^= np.take(table, column(buf, pos, stride, count, "<u2", j))
            j += 2
        else:
            table = _position_tables(length)[j]
            out ^= table[first[j]]
            out ^= np.take(table, column(buf, pos, stride, count, np.uint8, j))
            j += 1
    return out


def mask(crcs):
    """TensorFlow's masked CRC of each CRC: rotated right by 15 bits and offset."""
    crcs = np.asarray(crcs, dtype=np.uint32)
    return ((crcs >> np.uint32(15)) | (crcs << np.uint32(17))) + np.uint32(MASK_DELTA)
