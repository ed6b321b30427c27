"""tf.train: learning_rate_decay."""

__all__ = []
