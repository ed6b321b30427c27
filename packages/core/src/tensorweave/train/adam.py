"""``tf.train.AdamOptimizer`` with TF1's update: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t),
m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g², var -= lr_t m / (sqrt(v) + epsilon)."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops, training_ops
from tensorweave.train.optimizer import Optimizer

__all__ = ["AdamOptimizer"]


class AdamOptimizer(Optimizer):
    """Adam. Slots "m" and "v"; the non-slot variables ``beta1_power`` and ``beta2_power`` hold beta^t and
    are multiplied by beta after every step's updates. Epsilon is added to sqrt(v), not to v (TF1's
    "epsilon hat")."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _get_beta_accumulators(self):
        graph = graph_mod.get_default_graph()
        return self._get_non_slot_variable("beta1_power", graph), self._get_non_slot_variable("beta2_power", graph)

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        call = self._call_if_callable
        self._lr_t = convert_to_tensor(call(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(call(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(call(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(call(self._epsilon), name="epsilon")

    def _apply(self, grad, var, indices=None):
        beta1_power, beta2_power = self._get_beta_accumulators()
        dtype = var.dtype
        return training_ops.apply(
            "Adam", {"var": var.handle, "m": self.get_slot(var, "m").handle, "v": self.get_slot(var, "v").handle},
            {"beta1_power": self._hyper(beta1_power, dtype), "beta2_power": self._hyper(beta2_power, dtype),
             "lr": self._hyper(self._lr_t, dtype), "beta1": self._hyper(self._beta1_t, dtype),
             "beta2": self._hyper(self._beta2_t, dtype), "epsilon": self._hyper(self._epsilon_t, dtype)},
            grad, indices=indices, use_locking=self._use_locking)

    def _resource_apply_dense(self, grad, var):
        return self._apply(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply(grad, var, indices)

    def _finish(self, update_ops, name_scope):
        with graph_mod.control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with graph_mod.colocate_with(beta1_power):
                update_beta1 = beta1_power.assign(beta1_power * self._beta1_t, read_value=False)
                update_beta2 = beta2_power.assign(beta2_power * self._beta2_t, read_value=False)
        return control_flow_ops.group(*update_ops, update_beta1, update_beta2, name=name_scope)
