"""Fused optimizer update ops (ResourceApply*), applied in place on variables."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
