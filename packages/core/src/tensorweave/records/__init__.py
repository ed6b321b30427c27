"""TFRecord files, the format of TensorFlow's record files and of TensorBoard's event files: ``format`` (the
framing and its checksums), ``compression`` (GZIP and ZLIB streams), ``RecordWriter`` and ``RecordIterator``
(one record at a time, any compression), and ``LineIterator`` (a text file's lines, by TF's rules). These
modules import only crc32c, tensorweave.errors and the standard library, so every layer (ops' kernels,
tf.python_io, tf.data, the dashboard) can use them."""

from tensorweave.records.compression import COMPRESSION_TYPES, compression_type_string  # noqa: F401
from tensorweave.records.lines import LineIterator  # noqa: F401
from tensorweave.records.reader import RecordIterator  # noqa: F401
from tensorweave.records.writer import RecordWriter  # noqa: F401
