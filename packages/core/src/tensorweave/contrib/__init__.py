"""``tf.contrib``: the few pieces of TF1's contrib that programs still import, each a module of its own."""

from tensorweave.contrib import framework, layers, lookup, losses, rnn, slim  # noqa: F401
