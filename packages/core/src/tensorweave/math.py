"""``tf.math``: the elementwise, reduction and comparison ops under their TF 1.13+ namespace."""

from tensorweave.ops.math_ops import *  # noqa: F401,F403
