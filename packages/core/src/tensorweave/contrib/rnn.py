"""``tf.contrib.rnn``: the core RNN cells, wrappers and unrolled drivers under their contrib names, contrib's
layer-normalized LSTM, the block LSTMs and stacked bidirectional RNNs."""

from tensorweave.rnn.cell import LayerRNNCell, LSTMStateTuple, RNNCell
from tensorweave.rnn.cells import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, MultiRNNCell
from tensorweave.rnn.layer_norm_cell import LayerNormBasicLSTMCell
from tensorweave.rnn.lstm_block import LSTMBlockCell, LSTMBlockFusedCell
from tensorweave.rnn.stacked_bidirectional import stack_bidirectional_dynamic_rnn, stack_bidirectional_rnn
from tensorweave.rnn.static import static_bidirectional_rnn, static_rnn
from tensorweave.rnn.wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell", "LSTMCell",
           "LSTMBlockCell", "LSTMBlockFusedCell", "LSTMStateTuple", "LayerNormBasicLSTMCell", "LayerRNNCell", "MultiRNNCell", "RNNCell", "ResidualWrapper",
           "stack_bidirectional_dynamic_rnn", "stack_bidirectional_rnn", "static_bidirectional_rnn", "static_rnn"]
