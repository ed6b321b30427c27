"""``tf.math``: the elementwise, reduction and comparison ops under their TF 1.13+ namespace."""

from tensorweave.ops.comparison_ops import *  # noqa: F401,F403
from tensorweave.ops.confusion_matrix_ops import *  # noqa: F401,F403
from tensorweave.ops.cumulative_ops import *  # noqa: F401,F403
from tensorweave.ops.grid_ops import linspace  # noqa: F401
from tensorweave.ops.math_ops import *  # noqa: F401,F403
from tensorweave.ops.matmul_ops import *  # noqa: F401,F403
from tensorweave.ops.range_ops import *  # noqa: F401,F403
from tensorweave.ops.reduction_ops import *  # noqa: F401,F403
from tensorweave.ops.segment_ops import *  # noqa: F401,F403
from tensorweave.ops.special_math_ops import *  # noqa: F401,F403
from tensorweave.ops.top_k_ops import in_top_k, top_k  # noqa: F401 - TF 1.15 has them in tf.math too
from tensorweave.ops.unary_math_ops import *  # noqa: F401,F403
from tensorweave.ops.trig_ops import *  # noqa: F401,F403
from tensorweave.ops.bucketing_ops import bincount  # noqa: F401
from tensorweave.ops.check_ops import is_non_decreasing, is_strictly_increasing  # noqa: F401
from tensorweave.ops.cumulative_ops import cumulative_logsumexp  # noqa: F401
from tensorweave.ops.loss_ops import log_softmax, softmax  # noqa: F401
from tensorweave.ops.nn_ops import softplus, softsign, zero_fraction  # noqa: F401
from tensorweave.ops.normalization_ops import l2_normalize  # noqa: F401
from tensorweave.ops.reduction_ops import reduce_euclidean_norm  # noqa: F401
from tensorweave.ops.transpose_ops import invert_permutation  # noqa: F401
