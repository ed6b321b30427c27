"""``tf.python.framework``: TF1's internal path to ``graph_util`` (the module is tensorweave.framework.graph_util)."""

from tensorweave.framework import graph_util  # noqa: F401
