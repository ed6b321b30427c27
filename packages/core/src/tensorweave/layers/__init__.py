"""``tf.layers``: TF1's layers (dense, convolutions, pooling, flatten, dropout, batch normalization) as classes and
functions. The base ``Layer`` and the core layers are in ``core.py``, the other convolutions in
``convolutional.py``, 1-D pooling in ``pooling.py``, batch normalization in ``normalization.py``.

A layer's variables live in a variable scope named after it (``dense``, ``dense_1``... or ``name``) and are
made with ``get_variable`` on its first call, so the usual TF1 sharing applies: call the function again
with ``reuse=True`` and the same ``name``, or build inside a ``variable_scope(..., reuse=True)``, and the
same variables are used. Regularizers add their losses to ``GraphKeys.REGULARIZATION_LOSSES``.
"""

from tensorweave.layers import convolutional, core, normalization, pooling
from tensorweave.layers.convolutional import *  # noqa: F401,F403
from tensorweave.layers.core import *  # noqa: F401,F403
from tensorweave.layers.normalization import *  # noqa: F401,F403
from tensorweave.layers.pooling import *  # noqa: F401,F403

__all__ = core.__all__ + convolutional.__all__ + pooling.__all__ + normalization.__all__
