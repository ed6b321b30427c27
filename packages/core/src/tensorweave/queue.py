"""``tf.queue`` (TF 1.13+ names): the queue classes, as ``tf.FIFOQueue`` and friends."""

from tensorweave.ops.data_flow_ops import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue,
)
