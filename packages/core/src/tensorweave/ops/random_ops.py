"""Random ops with graph- and op-level seeds."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
