"""tf.train: adagrad."""

__all__ = []
