"""``tf.python``: the few internal module paths TF1 programs import directly (``tf.python.framework.graph_util``)."""

from tensorweave.python import framework  # noqa: F401
