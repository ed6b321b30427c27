"""tf.train: gradient_descent."""

__all__ = []
