"""``tf.compat.v1`` is Tensorweave itself: the whole API is TF1's."""

import sys

import tensorweave as v1

sys.modules[__name__ + ".v1"] = v1
