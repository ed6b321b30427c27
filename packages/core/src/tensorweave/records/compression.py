"""GZIP and ZLIB compression of whole TFRecord files, as TensorFlow does it: the framed records form one
stream, compressed as a whole (deflate, 15-bit window, memory level 9; GZIP with a bare header)."""

import io
import re
import zlib

from tensorweave import errors

COMPRESSION_TYPES = ("", "ZLIB", "GZIP")
_BY_NUMBER = dict(enumerate(COMPRESSION_TYPES))  # tf.python_io.TFRecordCompressionType: NONE, ZLIB, GZIP
_CHUNK = 256 << 10


def compression_type_string(value):
    """'' | 'ZLIB' | 'GZIP' for a compression type given as None, a name or a TFRecordCompressionType number."""
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and value in _BY_NUMBER:
        return _BY_NUMBER[value]
    if isinstance(value, str) and value in COMPRESSION_TYPES:
        return value
    raise ValueError(f'Not a valid compression_type: "{value}"; use None or "" (no compression), "ZLIB" or '
                     f'"GZIP" (or tf.io.TFRecordCompressionType.NONE, ZLIB, GZIP)')


def _window_bits(compression_type, window_bits):
    bits = zlib.MAX_WBITS if window_bits is None else int(window_bits)
    return bits + 16 if compression_type == "GZIP" else bits


class DeflatingWriter:
    """A binary file object's writer that compresses what is written (``compression_type`` ZLIB or GZIP)."""

    def __init__(self, fileobj, compression_type, level=None, window_bits=None, mem_level=None, strategy=None):
        self._file = fileobj
        self._deflate = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION if level is None else int(level), zlib.DEFLATED,
                                         _window_bits(compression_type, window_bits),
                                         9 if mem_level is None else int(mem_level),
                                         zlib.Z_DEFAULT_STRATEGY if strategy is None else int(strategy))

    def write(self, data):
        self._file.write(self._deflate.compress(data))

    def flush(self):
        """Writes out everything written so far (a sync flush), so a reader can read it all."""
        self._file.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def fileno(self):
        return self._file.fileno()

    def close(self):
        try:
            self._file.write(self._deflate.flush(zlib.Z_FINISH))
        finally:
            self._file.close()


class _Inflating(io.RawIOBase):
    """The decompressed bytes of a ZLIB or GZIP file object (a GZIP file may hold several members)."""

    def __init__(self, fileobj, compression_type, path):
        self._file, self._path, self._type = fileobj, path, compression_type
        self._bits = _window_bits(compression_type, None)
        self._inflate = zlib.decompressobj(self._bits)
        self._pending = b""

    def readable(self):
        return True

    def readinto(self, buffer):
        while not self._pending:
            if self._inflate.eof:
                rest = self._inflate.unused_data
                if not rest or self._type != "GZIP":
                    return 0
                self._inflate = zlib.decompressobj(self._bits)
                self._pending = self._decompress(rest)
                continue
            raw = self._inflate.unconsumed_tail or self._file.read(_CHUNK)
            if not raw:
                return 0
            self._pending = self._decompress(raw)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _decompress(self, raw):
        try:
            return self._inflate.decompress(raw, _CHUNK)
        except zlib.error as e:
            found = re.match(r"Error (-?\d+) while \w+ data: (.*)", str(e))
            why = f"with error {found[1]}: {found[2]}" if found else f"({e})"
            raise errors.DataLossError(None, None, (
                f"inflate() failed {why}, reading {self._path} as {self._type}-compressed records; was it written "
                f"with this compression_type?")) from None

    def close(self):
        self._file.close()
        super().close()


def open_inflating(fileobj, compression_type, path, buffer_size=None):
    """A buffered binary reader of the decompressed bytes of ``fileobj`` (its name ``path``, for errors)."""
    return io.BufferedReader(_Inflating(fileobj, compression_type, path), buffer_size or _CHUNK)
