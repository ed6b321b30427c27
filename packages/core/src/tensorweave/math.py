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
