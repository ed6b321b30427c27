"""``tf.nn``: activations, softmax and cross-entropies, convolution, pooling, dropout, embeddings."""

from tensorweave.ops.candidate_sampling_ops import *  # noqa: F401,F403
from tensorweave.ops.conv_ops import *  # noqa: F401,F403
from tensorweave.ops.embedding_ops import *  # noqa: F401,F403
from tensorweave.ops.loss_ops import *  # noqa: F401,F403
from tensorweave.ops.nn_ops import *  # noqa: F401,F403
from tensorweave.ops.normalization_ops import *  # noqa: F401,F403
from tensorweave.ops.pooling_ops import *  # noqa: F401,F403
from tensorweave.ops.sampled_loss_ops import *  # noqa: F401,F403
from tensorweave.ops.top_k_ops import *  # noqa: F401,F403

_MATH_ACTIVATIONS = ("sigmoid", "tanh")


def __getattr__(name):
    """``tf.nn.sigmoid`` and ``tf.nn.tanh`` are the math ops of the same name (they live in math_ops)."""
    if name in _MATH_ACTIVATIONS:
        from tensorweave.ops import math_ops
        return getattr(math_ops, name)
    raise AttributeError(f"module 'tensorweave.nn' has no attribute {name!r}")
