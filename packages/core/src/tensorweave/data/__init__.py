"""``tf.data``: input pipelines built as graph ops, iterated by iterator resources in the session.

A pipeline runs inside ``Session.run``: ``get_next()`` computes the next element through the dataset
ops' kernels, with bounded buffers and background threads where the pipeline asks for them (prefetch,
parallel map and interleave), so input preparation overlaps the training step.
"""

from tensorweave.data import experimental  # noqa: F401
from tensorweave.data.dataset_ops import AUTOTUNE, Dataset, DatasetV1  # noqa: F401
from tensorweave.data.iterator_ops import (  # noqa: F401
    Iterator, get_output_classes, get_output_shapes, get_output_types, make_initializable_iterator,
    make_one_shot_iterator,
)
from tensorweave.data.readers import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset  # noqa: F401
from tensorweave.data.structure import TensorSpec  # noqa: F401
