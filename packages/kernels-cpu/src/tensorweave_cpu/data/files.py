"""Datasets reading files, one file after another: lines of text, fixed-length records, TFRecords.

Each element is one scalar string. Files are opened when the iteration reaches them and closed when it
leaves them; GZIP and ZLIB files are inflated as a stream. Lines and TFRecords are read by the core's
``tensorweave.records`` (the one implementation of TF's line rules and record framing, which tf.python_io,
the queue readers and the dashboard's event files use too)."""

import os

import numpy as np

from tensorweave.extension import errors, records

from tensorweave_cpu.data.base import DatasetValue, GeneratorIterator

COMPRESSION_TYPES = records.COMPRESSION_TYPES


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
    if compression_type:
        return records.compression.open_inflating(raw, compression_type, path)
    return raw


class FileDataset(DatasetValue):
    """The records of each file in turn; a subclass's ``records(path)`` reads one file."""

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

    def _buffer(self):
        return int(self.buffer_size) if self.buffer_size > 0 else None


class TextLines(FileDataset):
    def records(self, path):
        with records.LineIterator(path, self.compression_type, self._buffer()) as lines:
            yield from lines


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
        """Both checksums of every record verified (DataLossError naming the record's offset and the file)."""
        with records.RecordIterator(path, self.compression_type, self._buffer()) as found:
            yield from found
