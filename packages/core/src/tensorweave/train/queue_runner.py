"""tf.train: queue_runner."""

__all__ = []
