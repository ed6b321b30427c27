"""Padding and tiling: pad, tile."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
