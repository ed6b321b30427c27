"""tf.train: device_setter."""

__all__ = []
