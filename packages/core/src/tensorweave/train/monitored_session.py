"""tf.train: monitored_session."""

__all__ = []
