"""Save and Restore ops for checkpoints."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
