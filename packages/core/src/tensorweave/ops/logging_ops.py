"""Print and Assert ops."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
