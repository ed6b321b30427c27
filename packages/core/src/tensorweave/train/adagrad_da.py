"""``tf.train.AdagradDAOptimizer``: Adagrad's dual averaging, for sparse models with L1 (Duchi et al. 2011)."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, init_ops, training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["AdagradDAOptimizer"]


class AdagradDAOptimizer(Optimizer):
    """The weights are recomputed each step from the sums of the gradients and of their squares and from
    ``global_step`` + 1 (TF counts the update being made; pass the step ``minimize`` increments). Slots:
    "gradient_accumulator", "gradient_squared_accumulator"."""

    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False,
                 name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(f"initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        if global_step is None:
            raise ValueError("AdagradDAOptimizer needs global_step (e.g. tf.train.get_or_create_global_step())")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_value = initial_gradient_squared_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._global_step = global_step

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            init = init_ops.constant_initializer(self._initial_value, dtype=v.dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), v.dtype, "gradient_squared_accumulator",
                                                    self._name)

    def _prepare(self):
        self._lr_t = convert_to_tensor(self._call_if_callable(self._learning_rate), name="learning_rate")
        self._l1_t = convert_to_tensor(self._call_if_callable(self._l1), name="l1_regularization_strength")
        self._l2_t = convert_to_tensor(self._call_if_callable(self._l2), name="l2_regularization_strength")
        with graph_mod.colocate_with(self._lr_t):  # a copy on the worker, not a read per variable from the ps
            self._step_on_worker = array_ops.identity(self._global_step) + 1

    def _apply(self, grad, var, indices=None):
        return training_ops.apply(
            "AdagradDA", {"var": var.handle,
                          "gradient_accumulator": self.get_slot(var, "gradient_accumulator").handle,
                          "gradient_squared_accumulator": self.get_slot(var, "gradient_squared_accumulator").handle},
            {"lr": self._hyper(self._lr_t, var.dtype), "l1": self._hyper(self._l1_t, var.dtype),
             "l2": self._hyper(self._l2_t, var.dtype), "global_step": array_ops.identity(self._step_on_worker)},
            grad, indices=indices, use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)
