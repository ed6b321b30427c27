"""``tf.examples``: what TF 1.x shipped for its tutorials (the MNIST reader)."""

from tensorweave.examples import tutorials  # noqa: F401
