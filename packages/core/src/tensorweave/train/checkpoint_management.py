"""tf.train: checkpoint_management."""

__all__ = []
