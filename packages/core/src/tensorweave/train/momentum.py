"""``tf.train.MomentumOptimizer``: accum = momentum * accum + grad; var -= lr * accum (or Nesterov's step)."""

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["MomentumOptimizer"]


class MomentumOptimizer(Optimizer):
    """Momentum; ``use_nesterov`` steps by lr * (grad + momentum * accum). Slot: "momentum"."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")
        self._momentum_tensor = convert_to_tensor(self._call_if_callable(self._momentum), name="momentum")

    def _apply(self, grad, var, indices=None):
        return training_ops.apply(
            "Momentum", {"var": var.handle, "accum": self.get_slot(var, "momentum").handle},
            {"lr": self._hyper(self._learning_rate_tensor, var.dtype),
             "momentum": self._hyper(self._momentum_tensor, var.dtype)},
            grad, indices=indices, use_locking=self._use_locking, use_nesterov=self._use_nesterov)

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)
