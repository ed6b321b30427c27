"""Shape ops: shape, size, rank, reshape, expand_dims, squeeze, broadcast_to."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
