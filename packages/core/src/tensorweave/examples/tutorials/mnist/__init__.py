"""``tf.examples.tutorials.mnist``: ``input_data.read_data_sets``, as in TF 1.x's tutorials."""

from tensorweave.examples.tutorials.mnist import input_data  # noqa: F401
