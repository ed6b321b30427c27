"""``tf.train.GradientDescentOptimizer``: var -= learning_rate * grad."""

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["GradientDescentOptimizer"]


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent; IndexedSlices gradients update only their rows."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")

    def _resource_apply_dense(self, grad, var):
        return training_ops.apply("GradientDescent", {"var": var.handle},
                                  {"alpha": self._hyper(self._learning_rate_tensor, var.dtype)}, grad,
                                  use_locking=self._use_locking)

    def _resource_apply_sparse(self, grad, var, indices):
        return training_ops.apply("GradientDescent", {"var": var.handle},
                                  {"alpha": self._hyper(self._learning_rate_tensor, var.dtype)}, grad,
                                  indices=indices, use_locking=self._use_locking)
