"""``tf.nn.rnn_cell``: TF1's RNN cells and cell wrappers."""

from tensorweave.rnn.cell import LSTMStateTuple, RNNCell
from tensorweave.rnn.cells import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, MultiRNNCell
from tensorweave.rnn.wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell", "LSTMCell",
           "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper"]
