"""``tf.nn``: activations, softmax and cross-entropies, convolution, pooling, dropout, embeddings."""

from tensorweave.ops.nn_ops import *  # noqa: F401,F403
