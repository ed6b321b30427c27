"""``tf.python_io`` (TF 1.x; also in ``tf.io``): writing and reading TFRecord files from Python. The format,
compression and checksums are ``tensorweave.records``; here are TF's classes and errors on top of them."""

import os

from tensorweave import errors
from tensorweave.records import RecordIterator, RecordWriter
from tensorweave.records.options import TFRecordCompressionType, TFRecordOptions, as_options  # noqa: F401

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]


def _not_found(path):
    return errors.NotFoundError(None, None, f"{os.fspath(path)}; No such file or directory (create its folder "
                                            f"first, e.g. with os.makedirs)")


class TFRecordWriter:
    """Writes records (bytes, or str as UTF-8) to the TFRecord file ``path``, compressed as ``options`` say
    (a TFRecordOptions, or a compression type: None, 'ZLIB', 'GZIP'). Use it as a context manager, or close it."""

    def __init__(self, path, options=None):
        arguments = as_options(options).writer_arguments()
        try:
            self._writer = RecordWriter(path, **arguments)
        except FileNotFoundError:
            raise _not_found(path) from None
        self._path = os.fspath(path)

    def write(self, record):
        if self._writer.closed:
            raise errors.FailedPreconditionError(None, None, f"Writer is closed. ({self._path}: write before "
                                                             f"close(), or open a new TFRecordWriter)")
        if isinstance(record, str):
            record = record.encode()
        elif not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"write() takes a record as bytes or str, not {type(record).__name__} (serialize a "
                            f"proto with .SerializeToString())")
        self._writer.write(record)

    def flush(self):
        """Writes what was written so far to the file (a GZIP/ZLIB file: readable up to here)."""
        if not self._writer.closed:
            self._writer.flush()

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tf_record_iterator(path, options=None):
    """Yields the records (bytes) of the TFRecord file ``path``; ``options``: its compression. A missing file
    raises NotFoundError, a damaged or cut-short record DataLossError when the iteration reaches it."""
    with RecordIterator(path, TFRecordOptions.get_compression_type_string(options)) as records:
        yield from records
