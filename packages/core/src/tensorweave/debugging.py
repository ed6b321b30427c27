"""``tf.debugging``: assertions, numeric checks and predicates under their TF 1.13+ namespace."""

from tensorweave.ops.check_ops import *  # noqa: F401,F403
from tensorweave.ops.logging_ops import Assert  # noqa: F401
from tensorweave.ops.numerics_ops import check_numerics  # noqa: F401
from tensorweave.ops.numerics_ops import verify_tensor_all_finite as assert_all_finite  # noqa: F401
from tensorweave.ops.unary_math_ops import is_finite, is_inf, is_nan  # noqa: F401
