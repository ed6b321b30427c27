"""Queues: FIFO, padding FIFO, random shuffle and priority queues."""

from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = []
