"""tf.train: saver."""

__all__ = []
