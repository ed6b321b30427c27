"""tf.train: rmsprop."""

__all__ = []
