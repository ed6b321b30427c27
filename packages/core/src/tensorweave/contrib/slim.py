"""``tf.contrib.slim``: slim's core in one namespace: contrib.framework's ``arg_scope`` and variable helpers,
contrib.layers' layers, initializers and regularizers, and ``slim.losses`` (contrib.losses)."""

from tensorweave.contrib import losses  # noqa: F401
from tensorweave.contrib.framework import *  # noqa: F401,F403
from tensorweave.contrib.layers import *  # noqa: F401,F403
from tensorweave.contrib.layers.layers import convolution2d as conv2d  # noqa: F401
from tensorweave.contrib.layers.regularizers import l1_regularizer, l2_regularizer  # noqa: F401
