"""``tf.train.Optimizer``: gradients, slot variables and the apply step shared by every optimizer.

``minimize`` is ``compute_gradients`` (tf.gradients against each variable's handle) then
``apply_gradients``, which makes the slots (per-variable state such as momentum, named
``<var>/<Optimizer>``) and non-slot variables (such as Adam's beta powers), adds one fused update op per
variable (sparse for IndexedSlices gradients), runs the optimizer's ``_finish`` after them, and then
increments ``global_step``. Subclasses give the update ops, as TF1's ``_resource_apply_dense`` and
``_resource_apply_sparse``.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops, control_flow_ops, gradients_impl, init_ops, state_ops, unary_math_ops, variable_scope, variables,
)
from tensorweave.ops.variables import SaveSliceInfo, Variable

__all__ = ["Optimizer"]

_VALID_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


def _var_key(var):
    return var.op.graph, var.op.name


def _is_variable(value):
    return isinstance(value, Variable)


def create_slot(primary, initializer, name, shape=None, dtype=None):
    """A non-trainable variable ``<primary>/<name>`` beside ``primary`` (a variable or a tensor), filled by
    ``initializer`` (an initializer, or a tensor giving the value and shape)."""
    dtype = dtype or primary.dtype
    shape = None if not callable(initializer) else primary.get_shape() if shape is None else shape
    with variable_scope.variable_scope(None, primary.op.name + "/" + name), graph_mod.colocate_with(primary):
        scope = variable_scope.get_variable_scope()
        partitioner = scope.partitioner
        scope.set_partitioner(None)
        try:
            slot = variable_scope.get_variable("", initializer=initializer, shape=shape, dtype=dtype,
                                               trainable=False)
        finally:
            scope.set_partitioner(partitioner)
    info = primary._get_save_slice_info() if _is_variable(primary) else None
    if info is not None:  # a slot of a shard saves as a slice of the slot of the whole variable
        real_name = slot.op.name[len(primary.op.name) + 1:]
        slot._set_save_slice_info(SaveSliceInfo(f"{info.full_name}/{real_name}", info.full_shape, info.var_offset,
                                                info.var_shape))
    return slot


class Optimizer:
    """Base class of optimizers. Subclasses define ``_create_slots``, ``_prepare``, ``_resource_apply_dense``,
    ``_resource_apply_sparse`` and, if needed, ``_finish``."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {(graph, var name): slot variable}
        self._non_slot_dict = {}  # (name, graph) -> variable
        self._hyper_casts = {}

    def get_name(self):
        return self._name

    # ---- gradients -----------------------------------------------------------------------------------
    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """[(gradient, variable)] for ``var_list`` (default: trainable variables); None where unconnected."""
        if callable(loss):
            raise TypeError("loss must be a tensor in graph mode, not a callable")
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             f"Optimizer.GATE_GRAPH. Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            grad_loss = convert_to_tensor(grad_loss)
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = graph_mod.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        else:
            var_list = _flatten_partitions(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients_impl.gradients(loss, var_list, grad_ys=grad_loss, gate_gradients=(
            gate_gradients == self.GATE_OP), aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == self.GATE_GRAPH:
            grads = _gate_all(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None and v.dtype is not dtypes.resource])
        return grads_and_vars

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """Adds the gradient and update ops for ``loss``; returns the op that runs one training step."""
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, gate_gradients=gate_gradients,
                                                aggregation_method=aggregation_method,
                                                colocate_gradients_with_ops=colocate_gradients_with_ops,
                                                grad_loss=grad_loss)
        if not [v for g, v in grads_and_vars if g is not None]:
            names = [str(v.name) for _, v in grads_and_vars]
            raise ValueError(f"No gradients provided for any variable, check your graph for ops that do not support "
                             f"gradients, between variables {names} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    # ---- applying -------------------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """One update op per (gradient, variable) with a gradient; then ``global_step`` += 1 if given."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for grad, var in grads_and_vars:
            if grad is not None and not isinstance(grad, IndexedSlices):
                grad = convert_to_tensor(grad)
            if not _is_variable(var):
                raise TypeError(f"apply_gradients can only update tf.Variables, got {var!r} with gradient {grad!r}")
            converted.append((grad, var))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: {[str(v.name) for _, v in converted]}.")
        graph = var_list[0].graph
        with graph.as_default():
            with variables.init_scope(graph):
                self._create_slots(var_list)
            update_ops = []
            with graph.name_scope(name or self._name) as scope:  # the train op takes the scope's name
                self._hyper_casts = {}
                self._prepare()
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph.name_scope("update_" + var.op.name), graph.colocate_with(var):
                        update_ops.append(self._apply_one(grad, var))
                finish = self._finish(update_ops, "update")
            with graph.name_scope(None), graph.control_dependencies([finish]):
                if global_step is None:
                    train_op = control_flow_ops.no_op(name=scope)
                else:
                    with graph.colocate_with(global_step):
                        train_op = state_ops.assign_add_variable_op(
                            global_step.handle, convert_to_tensor(1, dtype=global_step.dtype), name=scope)
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if train_op not in train_ops:
                train_ops.append(train_op)
            return train_op

    def _apply_one(self, grad, var):
        if grad.dtype is not var.dtype:
            raise ValueError(f"the gradient for {var.name} has dtype {grad.dtype.name} but the variable holds "
                             f"{var.dtype.name}")
        if isinstance(grad, IndexedSlices):
            return self._resource_apply_sparse(grad.values, var, grad.indices)
        return self._resource_apply_dense(grad, var)

    def _finish(self, update_ops, name_scope):
        return control_flow_ops.group(*update_ops, name=name_scope)

    # ---- what subclasses provide ----------------------------------------------------------------------
    def _create_slots(self, var_list):
        """Makes the slot variables each update needs (none by default)."""

    def _prepare(self):
        """Converts hyperparameters to tensors, once per apply_gradients."""

    def _resource_apply_dense(self, grad, var):
        """The update op for a dense gradient; TF1-style subclasses that define ``_apply_dense`` get it."""
        if type(self)._apply_dense is Optimizer._apply_dense:
            raise TypeError(f"{type(self).__name__} defines neither _resource_apply_dense nor _apply_dense")
        return self._apply_dense(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        """The update op for IndexedSlices; TF1-style subclasses that define ``_apply_sparse`` get it."""
        if type(self)._apply_sparse is Optimizer._apply_sparse:
            raise TypeError(f"{type(self).__name__} defines neither _resource_apply_sparse nor _apply_sparse, so it "
                            f"cannot apply the sparse gradient of {var.name}")
        return self._apply_sparse(IndexedSlices(grad, indices), var)

    def _apply_dense(self, grad, var):
        """TF1's hook for custom optimizers: return an op updating ``var`` (e.g. with ``var.assign_sub``)."""

    def _apply_sparse(self, grad, var):
        """TF1's hook for custom optimizers, with ``grad`` as IndexedSlices."""

    # ---- helpers for subclasses ------------------------------------------------------------------------
    @staticmethod
    def _call_if_callable(param):
        return param() if callable(param) else param

    def _hyper(self, tensor, dtype):
        """``tensor`` cast to ``dtype``, one Cast per hyperparameter and dtype in an apply_gradients."""
        key = (id(tensor), dtype)
        if key not in self._hyper_casts:
            self._hyper_casts[key] = unary_math_ops.cast(tensor, dtype)
        return self._hyper_casts[key]

    def _assert_valid_dtypes(self, tensors):
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError(f"Invalid type {dtype.name} for {t.name}, expected: "
                                 f"{[d.name for d in _VALID_DTYPES]}.")

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name, op_name):
        named_slots = self._slot_dict(slot_name)
        if _var_key(var) not in named_slots:
            named_slots[_var_key(var)] = create_slot(var, initializer, op_name, shape, dtype)
        return named_slots[_var_key(var)]

    def _zeros_slot(self, var, slot_name, op_name):
        return self._get_or_make_slot_with_initializer(var, init_ops.zeros_initializer(), var.get_shape(),
                                                       var.dtype, slot_name, op_name)

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        graph = colocate_with.graph
        key = (name, graph)
        if key not in self._non_slot_dict:
            with graph.as_default(), graph_mod.colocate_with(colocate_with):
                self._non_slot_dict[key] = variables.Variable(initial_value, name=name, trainable=False)
        return self._non_slot_dict[key]

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph or graph_mod.get_default_graph()))

    def _non_slot_variables(self):
        return list(self._non_slot_dict.values())

    def get_slot(self, var, name):
        """The slot ``name`` (e.g. "momentum", "m") of ``var``, or None."""
        return self._slots.get(name, {}).get(_var_key(var))

    def get_slot_names(self):
        return sorted(self._slots)

    def variables(self):
        """The optimizer's slot and non-slot variables in the default graph, by name."""
        graph = graph_mod.get_default_graph()
        found = [v for v in self._non_slot_variables() if v.graph is graph]
        found += [v for slots in self._slots.values() for v in slots.values() if v.graph is graph]
        return sorted(found, key=lambda v: v.name)


def _flatten_partitions(var_list):
    """Shards of partitioned variables are optimized one by one."""
    flat = []
    for v in var_list:
        parts = getattr(v, "_get_variable_list", None)
        flat.extend(parts() if callable(parts) else [v])
    return flat


def _gate_all(grads):
    """Every gradient waits for all of them (GATE_GRAPH): IndexedSlices keep their indices."""
    present = [g.values if isinstance(g, IndexedSlices) else g for g in grads if g is not None]
    if not present:
        return grads
    gate = control_flow_ops.group(*present, name="gate_gradients")
    gated = []
    with graph_mod.control_dependencies([gate]):
        for g in grads:
            if isinstance(g, IndexedSlices):
                g = IndexedSlices(array_ops.identity(g.values), g.indices, g.dense_shape)
            elif g is not None:
                g = array_ops.identity(g)
            gated.append(g)
    return gated
