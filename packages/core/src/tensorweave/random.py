"""``tf.random``: the random ops under their TF 1.13+ namespace."""

from tensorweave.ops.random_ops import *  # noqa: F401,F403
