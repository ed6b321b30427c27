"""``tf.nn``: activations, softmax and cross-entropies, convolution, pooling, dropout, embeddings, recurrent networks."""

from tensorweave.ops.candidate_sampling_ops import *  # noqa: F401,F403
from tensorweave.ops.conv3d_ops import *  # noqa: F401,F403
from tensorweave.ops.conv_ops import *  # noqa: F401,F403
from tensorweave.ops.convolution_ops import *  # noqa: F401,F403
from tensorweave.ops.ctc_ops import *  # noqa: F401,F403
from tensorweave.ops.depthwise_conv_ops import *  # noqa: F401,F403
from tensorweave.ops.embedding_ops import *  # noqa: F401,F403
from tensorweave.ops.loss_ops import *  # noqa: F401,F403
from tensorweave.ops.nn_ops import *  # noqa: F401,F403
from tensorweave.ops.normalization_ops import *  # noqa: F401,F403
from tensorweave.ops.pooling_ops import *  # noqa: F401,F403
from tensorweave.ops.sampled_loss_ops import *  # noqa: F401,F403
from tensorweave.ops.space_batch_ops import space_to_batch  # noqa: F401
from tensorweave.ops.space_depth_ops import depth_to_space, space_to_depth  # noqa: F401
from tensorweave.ops.top_k_ops import *  # noqa: F401,F403
from tensorweave.ops.unary_math_ops import sigmoid, tanh  # noqa: F401 - tf.nn has these math ops too
from tensorweave.rnn import (  # noqa: F401
    bidirectional_dynamic_rnn, dynamic_rnn, raw_rnn, rnn_cell, static_bidirectional_rnn, static_rnn,
)
