"""``tf.train.AdadeltaOptimizer``: steps scaled by the ratio of running RMS of past steps and of gradients."""

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["AdadeltaOptimizer"]


class AdadeltaOptimizer(Optimizer):
    """Adadelta (Zeiler 2012) with TF1's learning rate on top. Slots: "accum", "accum_update"."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False, name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = convert_to_tensor(self._call_if_callable(self._lr), name="lr")
        self._rho_t = convert_to_tensor(self._call_if_callable(self._rho), name="rho")
        self._epsilon_t = convert_to_tensor(self._call_if_callable(self._epsilon), name="epsilon")

    def _apply(self, grad, var, indices=None):
        return training_ops.apply(
            "Adadelta", {"var": var.handle, "accum": self.get_slot(var, "accum").handle,
                         "accum_update": self.get_slot(var, "accum_update").handle},
            {"lr": self._hyper(self._lr_t, var.dtype), "rho": self._hyper(self._rho_t, var.dtype),
             "epsilon": self._hyper(self._epsilon_t, var.dtype)},
            grad, indices=indices, use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)
