"""Reads the records of a TFRecord file one at a time, verifying both checksums of each, in any compression.

Errors are TensorFlow's: a missing file is NotFoundError; a checksum that does not match, or a file that
ends inside a record's data, is DataLossError, raised when the iteration reaches it (the records before it
have been returned). A file that ends inside a record's 12-byte header ends there, as in TensorFlow."""

import os

from tensorweave import errors
from tensorweave.records import compression as _compression
from tensorweave.records.format import DATA_CHECK, FOOTER, HEADER, header_problem, masked_crc

_BUFFER = 256 << 10


class RecordIterator:
    """Iterates the records (bytes) of the TFRecord file ``path``.

    ``compression_type`` is '', 'ZLIB' or 'GZIP' (or None, or a TFRecordCompressionType number). ``offset``
    is where the next record starts and ``record_offset`` where the one returned last started, both counted
    in the uncompressed stream (TFRecordReader's keys). ``verify=False`` skips the data checksums.
    """

    def __init__(self, path, compression_type=None, buffer_size=None, verify=True):
        self.path = os.fspath(path)
        self.compression_type = _compression.compression_type_string(compression_type)
        self.verify = verify
        self._file = None
        self.offset = 0
        self.record_offset = None
        try:
            raw = open(self.path, "rb", buffering=buffer_size or _BUFFER)
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{self.path}; No such file or directory") from None
        except IsADirectoryError:
            raise errors.FailedPreconditionError(None, None, f"{self.path}; Is a directory, not a record file") \
                from None
        self._file = (_compression.open_inflating(raw, self.compression_type, self.path, buffer_size)
                      if self.compression_type else raw)

    def __iter__(self):
        return self

    def __next__(self):
        if self._file is None:
            raise StopIteration
        start = self.offset
        head = self._file.read(HEADER.size)
        if len(head) < HEADER.size:  # a partial header ends the file, as in TF: a writer may be part way
            self.close()
            raise StopIteration
        length, problem = header_problem(head)
        if problem:
            hint = "; is this even a TFRecord file?" if start == 0 else ""
            self._fail("corrupted", start, f"{problem}{hint}")
        body = self._file.read(length + FOOTER.size)
        if len(body) < length + FOOTER.size:
            self._fail("truncated", start, f"it says it holds {length:,} bytes and the file ends "
                                           f"{len(body):,} bytes into them")
        data = body[:length]
        if self.verify and masked_crc(data) != FOOTER.unpack_from(body, length)[0]:
            self._fail("corrupted", start + HEADER.size, f"{DATA_CHECK}; the record starts at byte {start}")
        self.record_offset, self.offset = start, start + HEADER.size + length + FOOTER.size
        return data

    def _fail(self, what, offset, why):
        self.close()
        raise errors.DataLossError(None, None, (
            f"{what} record at {offset} in {self.path} ({why}); the records before it were read. The file was cut "
            f"short or damaged{'' if self.compression_type else ', or is compressed (pass its compression_type)'}"))

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
