"""Fills: fill, zeros, ones, zeros_like, ones_like."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
