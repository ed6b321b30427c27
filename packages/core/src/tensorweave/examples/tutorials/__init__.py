"""``tf.examples.tutorials``."""

from tensorweave.examples.tutorials import mnist  # noqa: F401
