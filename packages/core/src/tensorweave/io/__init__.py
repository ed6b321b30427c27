"""``tf.io`` (TF 1.14+ names): file access (``tf.io.gfile``), TFRecord files, parsing Examples, decoding records,
reading and writing files."""

from tensorweave.io import gfile  # noqa: F401
from tensorweave.ops.decode_ops import decode_csv, decode_raw  # noqa: F401
from tensorweave.ops.io_ops import read_file, write_file  # noqa: F401
from tensorweave.ops.parsing_config import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature  # noqa: F401
from tensorweave.ops.parsing_ops import (  # noqa: F401
    parse_example, parse_single_example, parse_single_sequence_example,
)
from tensorweave.python_io import (  # noqa: F401
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator,
)
from tensorweave.queue import PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue  # noqa: F401
