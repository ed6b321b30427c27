"""tf.train: training_util."""

__all__ = []
