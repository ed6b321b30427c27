"""tf.train: optimizer."""

__all__ = []
