"""Slicing: slice, strided_slice, and Python indexing of tensors."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
