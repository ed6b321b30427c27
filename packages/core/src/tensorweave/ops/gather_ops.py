"""Gathering and scattering: gather, gather_nd, scatter_nd, one_hot, boolean_mask, sequence_mask."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
