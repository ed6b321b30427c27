"""``tf.train.RMSPropOptimizer`` with TF1's update: ms = rho ms + (1 - rho) g²,
mom = momentum mom + lr g / sqrt(ms + epsilon), var -= mom (centered: ms - mg² in the root)."""

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops, training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["RMSPropOptimizer"]


class RMSPropOptimizer(Optimizer):
    """RMSProp. Slots "rms" (starting at ones, as TF1), "momentum", and "mg" when ``centered``."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate, self._decay, self._momentum, self._epsilon = learning_rate, decay, momentum, epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_initializer(v, init_ops.ones_initializer(dtype=v.dtype), v.get_shape(),
                                                    v.dtype, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        call = self._call_if_callable
        self._learning_rate_tensor = convert_to_tensor(call(self._learning_rate), name="learning_rate")
        self._decay_tensor = convert_to_tensor(call(self._decay), name="decay")
        self._momentum_tensor = convert_to_tensor(call(self._momentum), name="momentum")
        self._epsilon_tensor = convert_to_tensor(call(self._epsilon), name="epsilon")

    def _apply(self, grad, var, indices=None):
        dtype = var.dtype
        handles = {"var": var.handle, "ms": self.get_slot(var, "rms").handle,
                   "mom": self.get_slot(var, "momentum").handle}
        if self._centered:
            handles["mg"] = self.get_slot(var, "mg").handle
        scalars = {"lr": self._hyper(self._learning_rate_tensor, dtype), "rho": self._hyper(self._decay_tensor, dtype),
                   "momentum": self._hyper(self._momentum_tensor, dtype),
                   "epsilon": self._hyper(self._epsilon_tensor, dtype)}
        return training_ops.apply("CenteredRMSProp" if self._centered else "RMSProp", handles, scalars, grad,
                                  indices=indices, use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)
