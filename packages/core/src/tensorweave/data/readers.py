"""Datasets reading files: ``TextLineDataset``, ``TFRecordDataset``, ``FixedLengthRecordDataset`` (TF1's
``tf.data`` readers).

``filenames`` is a string, a list of them or a string tensor (scalar or vector, e.g. a placeholder fed when
the iterator is initialized); TFRecordDataset also takes a Dataset of file names, and with
``num_parallel_reads`` reads that many files at once on background threads (interleaving their records
one at a time, in a fixed order). ``compression_type`` is None, '', 'ZLIB' or 'GZIP'.
"""

from tensorweave import dtypes
from tensorweave.data import structure
from tensorweave.data.dataset_op import int64_scalar
from tensorweave.data.dataset_ops import Dataset
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFAULT_BUFFER_BYTES = 256 * 1024
_STRING_ELEMENT = structure.TensorSpec([], dtypes.string)


def _filenames(filenames, what):
    tensor = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
    if tensor.shape.ndims is not None and tensor.shape.ndims > 1:
        raise ValueError(f"{what}: filenames must be a string or a vector of strings, got shape {tensor.shape}")
    return tensor


def _compression(compression_type):
    return convert_to_tensor("" if compression_type is None else compression_type, dtype=dtypes.string,
                             name="compression_type")


def _buffer(buffer_size):
    return int64_scalar(DEFAULT_BUFFER_BYTES if buffer_size is None else buffer_size, "buffer_size")


class TextLineDataset(Dataset):
    """The lines of text files, without their line ends ('\\n' or '\\r\\n'), as scalar strings."""

    def __init__(self, filenames, compression_type=None, buffer_size=None):
        inputs = [_filenames(filenames, "TextLineDataset"), _compression(compression_type), _buffer(buffer_size)]
        super().__init__(apply_op("TextLineDataset", inputs, {"output_shapes": [[]]}, name="TextLineDataset"),
                         _STRING_ELEMENT)


class FixedLengthRecordDataset(Dataset):
    """The ``record_bytes``-long records of binary files, after ``header_bytes`` and before ``footer_bytes``."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None):
        inputs = [_filenames(filenames, "FixedLengthRecordDataset"), int64_scalar(header_bytes or 0, "header_bytes"),
                  int64_scalar(record_bytes, "record_bytes"), int64_scalar(footer_bytes or 0, "footer_bytes"),
                  _buffer(buffer_size), _compression(compression_type)]
        super().__init__(apply_op("FixedLengthRecordDatasetV2", inputs, {"output_shapes": [[]]},
                                  name="FixedLengthRecordDataset"), _STRING_ELEMENT)


def _one_tfrecord_file(filenames, compression_type, buffer_size):
    inputs = [_filenames(filenames, "TFRecordDataset"), _compression(compression_type), _buffer(buffer_size)]
    return Dataset(apply_op("TFRecordDataset", inputs, {"output_shapes": [[]]}, name="TFRecordDataset"),
                   _STRING_ELEMENT)


class TFRecordDataset(Dataset):
    """The records of TFRecord files (each a scalar string, e.g. a serialized tf.train.Example)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):
        if isinstance(filenames, Dataset) or num_parallel_reads is not None:
            names = filenames if isinstance(filenames, Dataset) else Dataset.from_tensor_slices(
                _filenames(filenames, "TFRecordDataset"))
            if names.output_types != dtypes.string or names.output_shapes.ndims not in (None, 0):
                raise TypeError(f"TFRecordDataset: a dataset of file names must have scalar string elements, got "
                                f"{names.output_types} of shape {names.output_shapes}")

            def read(name):
                return _one_tfrecord_file(name, compression_type, buffer_size)

            if num_parallel_reads is None:
                dataset = names.flat_map(read)
            else:
                dataset = names.interleave(read, cycle_length=num_parallel_reads, block_length=1,
                                           num_parallel_calls=num_parallel_reads)
        else:
            dataset = _one_tfrecord_file(filenames, compression_type, buffer_size)
        super().__init__(dataset._variant_tensor, _STRING_ELEMENT)

