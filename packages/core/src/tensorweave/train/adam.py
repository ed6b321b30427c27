"""tf.train: adam."""

__all__ = []
