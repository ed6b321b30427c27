"""``tf.train.ProximalGradientDescentOptimizer`` and ``ProximalAdagradOptimizer``: a gradient (or Adagrad) step
followed by the proximal operator of L1 (soft thresholding) and L2 (shrinking) regularization (FOBOS)."""

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops, training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["ProximalAdagradOptimizer", "ProximalGradientDescentOptimizer"]


class _Proximal(Optimizer):
    def __init__(self, learning_rate, l1_regularization_strength, l2_regularization_strength, use_locking, name):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _prepare(self):
        self._lr_t = convert_to_tensor(self._call_if_callable(self._learning_rate), name="learning_rate")
        self._l1_t = convert_to_tensor(self._call_if_callable(self._l1), name="l1_regularization_strength")
        self._l2_t = convert_to_tensor(self._call_if_callable(self._l2), name="l2_regularization_strength")

    def _regularization(self, var):
        return {"l1": self._hyper(self._l1_t, var.dtype), "l2": self._hyper(self._l2_t, var.dtype)}

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)


class ProximalGradientDescentOptimizer(_Proximal):
    """var = prox(var - lr * grad). No slots."""

    def __init__(self, learning_rate, l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalGradientDescent"):
        super().__init__(learning_rate, l1_regularization_strength, l2_regularization_strength, use_locking, name)

    def _apply(self, grad, var, indices=None):
        return training_ops.apply("ProximalGradientDescent", {"var": var.handle},
                                  {"alpha": self._hyper(self._lr_t, var.dtype), **self._regularization(var)}, grad,
                                  indices=indices, use_locking=self._use_locking)


class ProximalAdagradOptimizer(_Proximal):
    """accum += grad²; var = prox(var - lr / sqrt(accum) * grad). Slot: "accumulator"."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(learning_rate, l1_regularization_strength, l2_regularization_strength, use_locking, name)
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=v.dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), v.dtype, "accumulator", self._name)

    def _apply(self, grad, var, indices=None):
        return training_ops.apply("ProximalAdagrad", {"var": var.handle,
                                                      "accum": self.get_slot(var, "accumulator").handle},
                                  {"lr": self._hyper(self._lr_t, var.dtype), **self._regularization(var)}, grad,
                                  indices=indices, use_locking=self._use_locking)
