"""Reads a text file line by line as TensorFlow's TextLineReader and TextLineDataset do: lines end at ``\\n``
only, one ``\\r`` before it is dropped (a ``\\r`` inside a line is kept), and a last line without a newline
counts; the file may be GZIP or ZLIB compressed."""

import os

from tensorweave import errors
from tensorweave.records import compression as _compression

_BUFFER = 256 << 10


class LineIterator:
    """Iterates the lines (bytes, without their line end) of the text file ``path``; ``line_number`` is the
    1-based number of the line returned last. A missing file raises NotFoundError here, not at the first line."""

    def __init__(self, path, compression_type=None, buffer_size=None):
        self.path = os.fspath(path)
        self._file = None
        self.line_number = 0
        compression_type = _compression.compression_type_string(compression_type)
        try:
            raw = open(self.path, "rb", buffering=buffer_size or _BUFFER)
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{self.path}; No such file or directory") from None
        except IsADirectoryError:
            raise errors.FailedPreconditionError(None, None, f"{self.path}; Is a directory, not a text file") \
                from None
        self._file = (_compression.open_inflating(raw, compression_type, self.path, buffer_size)
                      if compression_type else raw)

    def __iter__(self):
        return self

    def __next__(self):
        line = self._file.readline() if self._file is not None else b""
        if not line:
            self.close()
            raise StopIteration
        if line.endswith(b"\n"):
            line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
        self.line_number += 1
        return line

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
