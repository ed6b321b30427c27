"""``tf.train.FtrlOptimizer``: FTRL-proximal (McMahan et al. 2013), with L1/L2 and TF's L2 shrinkage."""

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops, training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["FtrlOptimizer"]


class FtrlOptimizer(Optimizer):
    """FTRL; a positive ``l2_shrinkage_regularization_strength`` uses TF's FtrlV2 update (the shrinkage enters the
    linear term only). Slots: "accum" (starting at ``initial_accumulator_value``) and "linear"."""

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="Ftrl",
                 accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0):
        super().__init__(use_locking, name)
        for label, value, ok in (
                ("initial_accumulator_value", initial_accumulator_value, initial_accumulator_value >= 0),
                ("learning_rate_power", learning_rate_power, learning_rate_power <= 0),
                ("l1_regularization_strength", l1_regularization_strength, l1_regularization_strength >= 0),
                ("l2_regularization_strength", l2_regularization_strength, l2_regularization_strength >= 0),
                ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
                 l2_shrinkage_regularization_strength >= 0)):
            if not ok:
                bound = "less than or equal to 0.0" if label == "learning_rate_power" else "positive or zero"
                raise ValueError(f"{label} {value} needs to be {bound}")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=v.dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), v.dtype, "accum",
                                                    self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        def tensor(value, name):
            return convert_to_tensor(self._call_if_callable(value), name=name)
        self._tensors = {"lr": tensor(self._learning_rate, "learning_rate"), "l1": tensor(self._l1, "l1"),
                         "l2": tensor(self._l2, "l2"), "lr_power": tensor(self._learning_rate_power, "lr_power"),
                         "l2_shrinkage": tensor(self._l2_shrinkage, "l2_shrinkage")}

    def _apply(self, grad, var, indices=None):
        update = "Ftrl" if self._l2_shrinkage <= 0.0 else "FtrlV2"
        names = ("lr", "l1", "l2", "lr_power") + (("l2_shrinkage",) if update == "FtrlV2" else ())
        return training_ops.apply(
            update, {"var": var.handle, "accum": self.get_slot(var, "accum").handle,
                     "linear": self.get_slot(var, "linear").handle},
            {n: self._hyper(self._tensors[n], var.dtype) for n in names}, grad, indices=indices,
            use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)
