"""``tf.contrib.rnn.LayerNormBasicLSTMCell``: an LSTM whose gates and new memory are layer-normalized.

TF1's contrib cell (Ba et al., 2016, "Layer Normalization"), with its variable names: ``kernel`` (no bias when
normalizing), and ``gamma``/``beta`` under ``input/``, ``transform/``, ``forget/``, ``output/`` and ``state/``.
"""

from tensorweave.ops import (
    concat_split_ops, init_ops, matmul_ops, nn_ops, normalization_ops, unary_math_ops, variable_scope as vs,
)
from tensorweave.rnn.cell import LSTMStateTuple, RNNCell

__all__ = ["LayerNormBasicLSTMCell"]


class LayerNormBasicLSTMCell(RNNCell):
    """``layer_norm=False`` makes it a BasicLSTMCell with a ``bias``; ``dropout_keep_prob`` drops the candidate
    ``g`` (recurrent dropout without memory loss, Semeniuta et al., 2016)."""

    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=unary_math_ops.tanh, layer_norm=True,
                 norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0, dropout_prob_seed=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = int(num_units)
        self._activation = activation
        self._forget_bias = forget_bias
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._g = norm_gain
        self._b = norm_shift

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def _norm(self, value, scope):
        """Normalized over the last axis with this cell's ``<scope>/gamma`` and ``<scope>/beta`` (as contrib's
        ``layer_norm``: moments over the features, epsilon 1e-12)."""
        shape = value.shape[-1:]
        with vs.variable_scope(scope):
            gamma = vs.get_variable("gamma", shape=shape, initializer=init_ops.constant_initializer(self._g),
                                    dtype=value.dtype)
            beta = vs.get_variable("beta", shape=shape, initializer=init_ops.constant_initializer(self._b),
                                   dtype=value.dtype)
        mean, variance = normalization_ops.moments(value, [1], keep_dims=True)
        epsilon = 1e-3 if value.dtype.base_dtype.name == "float16" else 1e-12
        normalized = normalization_ops.batch_normalization(value, mean, variance, beta, gamma, epsilon)
        normalized.set_shape(value.shape)
        return normalized

    def _linear(self, args):
        out_size = 4 * self._num_units
        kernel = vs.get_variable("kernel", [args.shape[-1].value, out_size], dtype=args.dtype)
        out = matmul_ops.matmul(args, kernel)
        if not self._layer_norm:
            out = nn_ops.bias_add(out, vs.get_variable("bias", [out_size], dtype=args.dtype))
        return out

    def call(self, inputs, state):
        c, h = state
        args = concat_split_ops.concat([inputs, h], 1)
        i, j, f, o = concat_split_ops.split(self._linear(args), 4, axis=1)
        if self._layer_norm:
            i, j, f, o = (self._norm(i, "input"), self._norm(j, "transform"), self._norm(f, "forget"),
                          self._norm(o, "output"))
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = nn_ops.dropout(g, self._keep_prob, seed=self._seed)
        sigmoid = unary_math_ops.sigmoid
        new_c = c * sigmoid(f + self._forget_bias) + sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)
