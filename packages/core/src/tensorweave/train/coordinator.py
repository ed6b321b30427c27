"""tf.train: coordinator."""

__all__ = []
