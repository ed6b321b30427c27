"""``tf.train.ExponentialMovingAverage``: shadow copies of variables (or tensors) that follow them with
``avg -= (1 - decay) * (avg - value)`` each time the op from ``apply`` runs, as TF 1.15 keeps them: a variable's
average is the slot ``<var>/<name>`` starting at the variable's initial value; a tensor's starts at zero, and with
``zero_debias`` is divided by ``1 - decay^t`` (its ``biased`` and ``local_step`` variables beside it)."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops, init_ops, math_ops, state_ops, unary_math_ops, variable_scope, variables
from tensorweave.train.optimizer import create_slot

__all__ = ["ExponentialMovingAverage"]

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


def _key(value):
    return value.graph, value.op.name if isinstance(value, variables.Variable) else value.name


def _zero_debiased_update(average, value, one_minus_decay):
    """avg = biased / (1 - decay^t), with biased following ``value`` from zero and t counting the updates."""
    graph = average.graph
    with variable_scope.variable_scope(average.op.name, values=[average, value, one_minus_decay]):
        with variables.init_scope(graph), graph_mod.colocate_with(average):
            biased = variable_scope.get_variable("biased", shape=average.get_shape(), dtype=average.dtype,
                                                 initializer=init_ops.zeros_initializer(), trainable=False)
            local_step = variable_scope.get_variable("local_step", shape=[], dtype=average.dtype,
                                                     initializer=init_ops.zeros_initializer(), trainable=False)
    update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
    update_step = state_ops.assign_add(local_step, 1)
    bias_factor = 1 - math_ops.pow(1.0 - one_minus_decay, update_step)
    return state_ops.assign(average, update_biased / bias_factor)


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """``variable -= (variable - value) * (1 - decay)`` (zero-debiased if asked); the updated value."""
    with graph_mod.name_scope(name, "AssignMovingAvg", [variable, value, decay]):
        one_minus_decay = convert_to_tensor(1.0 - decay, name="decay")
        if one_minus_decay.dtype != variable.dtype:
            one_minus_decay = unary_math_ops.cast(one_minus_decay, variable.dtype)
        if zero_debias:
            return _zero_debiased_update(variable, value, one_minus_decay)
        return state_ops.assign_sub(variable, (variable - value) * one_minus_decay)


class ExponentialMovingAverage:
    """Moving averages of variables and tensors. ``num_updates`` (e.g. the global step) caps the decay at
    ``(1 + num_updates) / (10 + num_updates)`` so early averages move quickly."""

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Makes the averages of ``var_list`` (default: the trainable variables) and returns one op updating them
        all; averages of variables start at their initial values."""
        var_list = variables.trainable_variables() if var_list is None else list(var_list)
        if not var_list:
            return control_flow_ops.no_op(name=self._name)
        graph = var_list[0].graph
        debiased = set()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name} is {var.dtype.name}")
            if _key(var) in self._averages:
                raise ValueError(f"Moving average already computed for: {var.name}")
            with variables.init_scope(graph):
                if isinstance(var, variables.Variable):
                    average = create_slot(var, var.initialized_value(), self._name)
                    graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    average = create_slot(var, init_ops.zeros_initializer(), self._name, var.get_shape(), var.dtype)
                    if self._zero_debias:
                        debiased.add(_key(average))
            self._averages[_key(var)] = average
        with graph.as_default(), graph_mod.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                num_updates = unary_math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [assign_moving_average(self._averages[_key(var)], var, decay,
                                             zero_debias=_key(self._averages[_key(var)]) in debiased)
                       for var in var_list]
        with graph.as_default(), graph_mod.name_scope(None):  # the op takes the scope's own name, as TF's
            return control_flow_ops.group(*updates, name=scope)

    def average(self, var):
        """The variable holding ``var``'s average, or None if ``apply`` was not given it."""
        return self._averages.get(_key(var))

    def average_name(self, var):
        """The checkpoint name of ``var``'s average (``<var>/<name>``), also before ``apply`` makes it."""
        if _key(var) in self._averages:
            return self._averages[_key(var)].op.name
        return var.graph.unique_name(var.op.name + "/" + self._name, mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None):
        """{checkpoint name: variable} for a Saver that loads each averaged variable from its average and every
        other global variable from itself (evaluate with the averaged weights)."""
        if moving_avg_variables is None:
            moving_avg_variables = variables.trainable_variables() + variables.moving_average_variables()
        averaged = {_key(v): v for v in moving_avg_variables}
        name_map = {self.average_name(v): v for v in averaged.values()}
        for v in variables.global_variables():
            if _key(v) not in averaged and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
