"""Neural-network ops: activations, softmax, convolution, pooling, losses, embeddings."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
