"""``tf.contrib.layers``: contrib's layer functions, initializers and regularizers (layers.py,
separable_transpose.py, optimizers.py, initializers.py, regularizers.py), with TF 1.15's contrib variable names."""

from tensorweave.contrib.layers import initializers, layers, optimizers, regularizers, separable_transpose
from tensorweave.contrib.layers.initializers import *  # noqa: F401,F403
from tensorweave.contrib.layers.layers import *  # noqa: F401,F403
from tensorweave.contrib.layers.optimizers import *  # noqa: F401,F403
from tensorweave.contrib.layers.regularizers import *  # noqa: F401,F403
from tensorweave.contrib.layers.separable_transpose import *  # noqa: F401,F403

__all__ = (initializers.__all__ + layers.__all__ + optimizers.__all__ + regularizers.__all__
           + separable_transpose.__all__)
