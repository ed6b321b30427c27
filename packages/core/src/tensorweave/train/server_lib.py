"""tf.train: server_lib."""

__all__ = []
