"""tf.train: momentum."""

__all__ = []
