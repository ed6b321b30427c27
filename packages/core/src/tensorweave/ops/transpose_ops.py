"""Reordering: transpose, reverse, invert_permutation."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
