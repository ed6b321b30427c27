"""tf.train: sync_replicas_optimizer."""

__all__ = []
