"""``tf.train.AdagradOptimizer``: accum += grad²; var -= lr * grad / sqrt(accum)."""

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops, training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["AdagradOptimizer"]


class AdagradOptimizer(Optimizer):
    """Adagrad (TF1: no epsilon; the accumulator starts at ``initial_accumulator_value``). Slot: "accumulator"."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=v.dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), v.dtype, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                       name="learning_rate")

    def _apply(self, grad, var, indices=None):
        return training_ops.apply("Adagrad", {"var": var.handle, "accum": self.get_slot(var, "accumulator").handle},
                                  {"lr": self._hyper(self._learning_rate_tensor, var.dtype)}, grad, indices=indices,
                                  use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)
