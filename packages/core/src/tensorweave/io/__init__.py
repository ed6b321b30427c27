"""``tf.io``: file access (``tf.io.gfile``)."""

from tensorweave.io import gfile  # noqa: F401
