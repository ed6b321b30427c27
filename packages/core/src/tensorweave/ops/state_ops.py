"""Variable ops: resource variables and their reads, assignments and scatter updates."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
