"""``tf.io`` (TF 1.14+ names): file access (``tf.io.gfile``), TFRecord files, parsing Examples, decoding records,
reading and writing files, image codecs (also in ``tf.image``), as TF 1.15 has them."""

from tensorweave.io import gfile  # noqa: F401
from tensorweave.ops.decode_ops import decode_csv, decode_raw  # noqa: F401
from tensorweave.ops.image_codec_ops import (  # noqa: F401
    decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png,
)
from tensorweave.ops.io_ops import matching_files, read_file, write_file  # noqa: F401
from tensorweave.ops.parsing_config import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature  # noqa: F401
from tensorweave.ops.parsing_ops import (  # noqa: F401
    parse_example, parse_single_example, parse_single_sequence_example,
)
from tensorweave.python_io import (  # noqa: F401
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator,
)
from tensorweave.train.meta_graph import write_graph  # noqa: F401
from tensorweave.queue import PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue  # noqa: F401
