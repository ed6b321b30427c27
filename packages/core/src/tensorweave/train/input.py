"""tf.train: input."""

__all__ = []
