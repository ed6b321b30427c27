"""Writes TFRecord files: each record framed (``format.frame``) and written at once, so a crash leaves at most
one incomplete record at the end; GZIP or ZLIB compress the whole stream, as TensorFlow does."""

import os

from tensorweave.records import compression as _compression
from tensorweave.records.format import frame


class RecordWriter:
    """Appends records to ``target``, a path (the file is created or truncated) or a binary file object.

    ``compression_type`` is '', 'ZLIB' or 'GZIP' (or None, or a TFRecordCompressionType number); the other
    arguments tune zlib as TFRecordOptions does (None: TensorFlow's defaults).
    """

    def __init__(self, target, compression_type=None, compression_level=None, window_bits=None, mem_level=None,
                 compression_strategy=None):
        self.compression_type = _compression.compression_type_string(compression_type)
        fileobj = open(os.fspath(target), "wb") if isinstance(target, (str, bytes, os.PathLike)) else target
        if self.compression_type:
            fileobj = _compression.DeflatingWriter(fileobj, self.compression_type, compression_level, window_bits,
                                                   mem_level, compression_strategy)
        self._file = fileobj

    @property
    def closed(self):
        return self._file is None

    def write(self, data):
        self._file.write(frame(bytes(data)))

    def flush(self):
        self._file.flush()

    def sync(self):
        """Flushes and asks the OS to put the file on disk (``fsync``)."""
        self.flush()
        os.fsync(self._file.fileno())

    def close(self):
        if self._file is not None:
            file, self._file = self._file, None
            file.close()
