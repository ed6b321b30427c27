"""Joining and splitting: concat, split, stack, unstack."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
