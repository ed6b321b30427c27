"""``tf.summary`` (TF 1.x): summary ops, FileWriter, and the protos a program may build by hand."""

from tensorweave_board.protos import (  # noqa: F401
    Event, HistogramProto, SessionLog, Summary, SummaryDescription, SummaryMetadata, TaggedRunMetadata,
)
from tensorweave_board.summary_ops import (  # noqa: F401
    audio, histogram, image, merge, merge_all, scalar, tensor_summary, text,
)
from tensorweave_board.writer import FileWriter, FileWriterCache  # noqa: F401
