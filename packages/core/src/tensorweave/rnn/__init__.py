"""Recurrent networks as TF1 builds them: cells (``tf.nn.rnn_cell``) and the drivers that run a cell over time
(``tf.nn.dynamic_rnn`` and friends). ``cell.py`` is the base cell, ``cells.py`` TF1's cells, ``wrappers.py`` the
cell wrappers, ``layer_norm_cell.py`` contrib's layer-normalized LSTM, ``dynamic.py`` the ``tf.while_loop``
drivers, ``static.py`` the unrolled ones, ``stacked_bidirectional.py`` contrib's stacks of bidirectional RNNs,
``step.py`` what the drivers share; ``rnn_cell.py`` is the ``tf.nn.rnn_cell`` namespace
(``tensorweave/contrib/rnn.py`` is ``tf.contrib.rnn``).
"""

from tensorweave.rnn import rnn_cell
from tensorweave.rnn.dynamic import bidirectional_dynamic_rnn, dynamic_rnn, raw_rnn
from tensorweave.rnn.static import static_bidirectional_rnn, static_rnn

__all__ = ["bidirectional_dynamic_rnn", "dynamic_rnn", "raw_rnn", "rnn_cell", "static_bidirectional_rnn",
           "static_rnn"]
