"""Datasets reading files, one file after another: lines of text, fixed-length records, TFRecords.

Each element is one scalar string. Files are opened when the iteration reaches them and closed when it
leaves them; GZIP and ZLIB files are inflated as a stream. ``tfrecord_records`` is the one place that reads
the TFRecord framing (to be replaced by the core's ``tensorweave.records.RecordIterator``).
"""

import gzip
import os
import struct
import zlib

import crc32c
import numpy as np

from tensorweave.extension import errors

from tensorweave_cpu.data.base import DatasetValue, GeneratorIterator

COMPRESSION_TYPES = ("", "ZLIB", "GZIP")


def _string(value):
    out = np.empty((), dtype=object)
    out[()] = value
    return out


def _open(path, compression_type, buffer_size):
    """A binary stream of ``path``'s (inflated) bytes; TF's errors for a missing file."""
    try:
        raw = open(path, "rb", buffering=max(int(buffer_size), 1) if buffer_size > 0 else -1)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    if compression_type == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression_type == "ZLIB":
        return _ZlibStream(raw)
    return raw


class _ZlibStream:
    """A readable stream inflating a zlib-wrapped file (TF's ZLIB record compression)."""

    def __init__(self, raw):
        self._raw, self._inflate, self._pending = raw, zlib.decompressobj(), b""

    def read(self, n=-1):
        while n < 0 or len(self._pending) < n:
            chunk = self._raw.read(1 << 16)
            if not chunk:
                self._pending += self._inflate.flush()
                break
            self._pending += self._inflate.decompress(chunk)
        if n < 0:
            n = len(self._pending)
        out, self._pending = self._pending[:n], self._pending[n:]
        return out

    def __iter__(self):
        return iter(self.read().splitlines(keepends=True))

    def close(self):
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FileDataset(DatasetValue):
    def __init__(self, filenames, compression_type, buffer_size):
        super().__init__([np.object_])
        if compression_type not in COMPRESSION_TYPES:
            raise errors.InvalidArgumentError(None, None, (
                f"Unsupported compression_type: {compression_type!r}; use '' (none), 'ZLIB' or 'GZIP'"))
        names = np.asarray(filenames, dtype=object)
        if names.ndim > 1:
            raise errors.InvalidArgumentError(None, None, f"filenames must be a scalar or a vector, got shape "
                                                          f"{list(names.shape)}")
        self.filenames = [n.decode() if isinstance(n, bytes) else str(n) for n in names.reshape(-1)]
        self.compression_type, self.buffer_size = compression_type, buffer_size

    def iterator(self, pipeline):
        return GeneratorIterator((_string(r),) for path in self.filenames for r in self.records(path))

    def records(self, path):
        raise NotImplementedError


class TextLines(FileDataset):
    def records(self, path):
        with _open(path, self.compression_type, self.buffer_size) as f:
            for line in f:
                if line.endswith(b"\n"):
                    line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
                yield line


class FixedLengthRecords(FileDataset):
    def __init__(self, filenames, header_bytes, record_bytes, footer_bytes, buffer_size, compression_type):
        super().__init__(filenames, compression_type, buffer_size)
        if record_bytes <= 0 or header_bytes < 0 or footer_bytes < 0:
            raise errors.InvalidArgumentError(None, None, (
                f"record_bytes ({record_bytes}) must be > 0, header_bytes ({header_bytes}) and footer_bytes "
                f"({footer_bytes}) >= 0"))
        self.header, self.record, self.footer = header_bytes, record_bytes, footer_bytes

    def records(self, path):
        with _open(path, self.compression_type, self.buffer_size) as f:
            if self.compression_type:
                data = f.read()  # the length of an inflated stream is only known once read
                yield from self._split(path, data[self.header:len(data) - self.footer], len(data))
                return
            size = os.fstat(f.fileno()).st_size
            self._check(path, size - self.header - self.footer)
            f.read(self.header)
            for _ in range((size - self.header - self.footer) // self.record):
                yield f.read(self.record)

    def _check(self, path, body):
        if body % self.record:
            raise errors.InvalidArgumentError(None, None, (
                f"Excluding the header ({self.header} bytes) and footer ({self.footer} bytes), input file \"{path}\" "
                f"has body length {body} bytes, which is not an exact multiple of the record length "
                f"({self.record} bytes)."))

    def _split(self, path, body, total):
        self._check(path, max(total - self.header - self.footer, 0))
        for start in range(0, len(body), self.record):
            yield body[start:start + self.record]


class TFRecords(FileDataset):
    def records(self, path):
        return tfrecord_records(path, self.compression_type, self.buffer_size)


_LENGTH = struct.Struct("<QI")
_CRC = struct.Struct("<I")


def _masked_crc(data):
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord_records(path, compression_type, buffer_size):
    """The records of one TFRecord file, both checksums verified (DataLossError on a damaged record)."""
    with _open(path, compression_type, buffer_size) as f:
        offset = 0
        while True:
            head = f.read(_LENGTH.size)
            if not head:
                return
            if len(head) < _LENGTH.size:
                raise errors.DataLossError(None, None, f"truncated record at {offset} in {path}")
            length, length_crc = _LENGTH.unpack(head)
            if _masked_crc(head[:8]) != length_crc:
                raise errors.DataLossError(None, None, f"corrupted record at {offset} in {path} (the length's "
                                                       f"checksum does not match; is this a TFRecord file?)")
            body = f.read(length + _CRC.size)
            if len(body) < length + _CRC.size:
                raise errors.DataLossError(None, None, f"truncated record at {offset} in {path}")
            data = body[:length]
            if _masked_crc(data) != _CRC.unpack_from(body, length)[0]:
                raise errors.DataLossError(None, None, f"corrupted record at {offset} in {path} (the data's "
                                                       f"checksum does not match)")
            offset += _LENGTH.size + length + _CRC.size
            yield data
