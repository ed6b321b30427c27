"""``tf.Variable``: state that outlives a step, as a resource on its device, and the variable collections.

A Variable owns a handle op (``VarHandleOp`` named like the variable), an initializer (``<name>/Assign``)
and a read (``<name>/Read/ReadVariableOp``) that stands for it in ``Session.run`` and control
dependencies. Used as a tensor it reads the variable anew each time, so a read made under
``control_dependencies`` sees the updates it waits for. Gradients are taken against the handle.
"""

import contextlib

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.default_session import get_default_session_or_raise
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from tensorweave.ops import (
    array_ops, comparison_ops, concat_split_ops, cond as cond_ops, control_flow_ops, mask_ops, slicing_ops, state_ops,
    variable_proto,
)
from tensorweave.ops.tensor_operators import attach_operators

__all__ = ["Variable", "VariableV1", "all_variables", "assert_variables_initialized", "global_variables",
           "global_variables_initializer", "initialize_all_variables", "initialize_local_variables",
           "initialize_variables", "local_variables", "local_variables_initializer", "model_variables",
           "moving_average_variables", "report_uninitialized_variables", "trainable_variables",
           "variables_initializer"]


@contextlib.contextmanager
def init_scope(graph):
    """Builds set-up ops (variables, slots) outside any cond/while context and control dependencies."""
    context = graph._get_control_flow_context()
    graph._set_control_flow_context(None)
    try:
        with graph.control_dependencies(None):
            yield
    finally:
        graph._set_control_flow_context(context)


class SaveSliceInfo:
    """Where a partition sits in its full variable, for checkpoints (``full_shape`` then ``offset,length``)."""

    def __init__(self, full_name, full_shape, var_offset, var_shape):
        self.full_name = full_name
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)
        self.var_shape = list(var_shape)

    @property
    def spec(self):
        full = " ".join(str(d) for d in self.full_shape) + " "
        return full + ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))


class Variable:
    """A mutable tensor living in a container of its device; TF1's ``tf.Variable`` (resource semantics)."""

    SaveSliceInfo = SaveSliceInfo
    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable=None, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None, synchronization=None, aggregation=None,
                 shape=None):
        if variable_def is not None:
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        if isinstance(collections, str):
            raise ValueError(f"collections argument to Variable constructor must be a list, got {collections!r}")
        trainable = True if trainable is None else trainable
        collections = [GraphKeys.GLOBAL_VARIABLES] if collections is None else list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        graph = graph_mod._graph_of([initial_value])
        with graph.as_default(), init_scope(graph):
            with graph.name_scope(name or "Variable") as scope:
                with graph.name_scope("Initializer"):
                    value = initial_value() if callable(initial_value) else initial_value
                    initial_value = convert_to_tensor(value, dtype=dtype, name="initial_value")
                var_shape = self._static_shape(initial_value, validate_shape, shape, expected_shape)
                handle = state_ops.var_handle_op(initial_value.dtype, var_shape, graph.current_container,
                                                 shared_name=scope[:-1], name=scope)  # named as its scope
                with graph.colocate_with(handle):
                    initializer = state_ops.assign_variable_op(handle, initial_value, name="Assign")
                    with graph.name_scope("Read"):
                        read = state_ops.read_variable_op(handle, initial_value.dtype)
                cached = None
                if caching_device is not None:
                    with graph.device(caching_device):
                        cached = array_ops.identity(read, name="cached")
        self._setup(handle, initial_value.dtype, var_shape, read)
        self._initial_value = initial_value
        self._initializer_op = initializer
        self._trainable = trainable
        self._constraint = constraint
        self._cached_value = cached
        graph.add_to_collections(collections, self)

    @staticmethod
    def _static_shape(initial_value, validate_shape, shape, expected_shape):
        if not validate_shape:
            return tensor_shape.TensorShape(None) if shape is None else tensor_shape.as_shape(shape)
        value_shape = initial_value.shape
        for given in (shape, expected_shape):
            if given is not None and not value_shape.is_compatible_with(tensor_shape.as_shape(given)):
                raise ValueError(f"initial value of shape {value_shape} does not match the shape {given} given "
                                 f"for the variable")
        if shape is not None:
            value_shape = value_shape.merge_with(tensor_shape.as_shape(shape))
        if not value_shape.is_fully_defined():
            raise ValueError(f"initial_value must have a shape specified: {initial_value}; pass "
                             f"validate_shape=False for a variable whose shape may change")
        return value_shape

    def _init_from_proto(self, variable_def, import_scope=None):
        """The variable a meta graph's VariableDef describes, over ops already in the default graph."""
        variable_proto.init_from_proto(self, variable_def, import_scope)

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        return Variable(variable_def=variable_def, import_scope=import_scope)

    def to_proto(self, export_scope=None):
        """This variable as TF's VariableDef (None when it lies outside ``export_scope``)."""
        return variable_proto.to_proto(self, export_scope)

    def _setup(self, handle, dtype, shape, graph_element):
        self._handle = handle
        self._dtype = dtype
        self._shape = shape
        self._graph_element = graph_element
        self._save_slice_info = None
        self._cached_value = None

    # ---- identity -------------------------------------------------------------------------------------
    @property
    def handle(self):
        return self._handle

    @property
    def name(self):
        return self._handle.name

    @property
    def op(self):
        return self._handle.op

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def device(self):
        return self._handle.device

    @property
    def graph(self):
        return self._handle.graph

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def initial_value(self):
        return self._initial_value

    @property
    def initializer(self):
        return self._initializer_op

    def _set_save_slice_info(self, save_slice_info):
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info

    def _as_graph_element(self):
        return self._graph_element

    def _gradient_target(self):
        return self._handle

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __iter__(self):
        raise TypeError(f"'Variable' object is not iterable ({self.name}); index it or use tf.unstack on its value")

    def __bool__(self):
        raise TypeError(f"using a tf.Variable ({self.name}) as a Python bool is not allowed: its value is only "
                        f"known when the graph runs. Use tf.cond to branch on it.")

    # ---- reading -------------------------------------------------------------------------------------
    def _read(self, name="ReadVariableOp"):
        with self.graph.colocate_with(self._handle, ignore_existing=True):
            return state_ops.read_variable_op(self._handle, self._dtype, name=name)

    def value(self):
        """A tensor holding the variable's value when it runs (a new read each call)."""
        if self._cached_value is not None:
            return self._cached_value
        return self._read()

    def read_value(self):
        """A new read of the variable, ordered by the control dependencies in force here."""
        return self._read("read_value")

    def sparse_read(self, indices, name=None):
        """Rows ``indices`` of the variable (ResourceGather); its gradient is IndexedSlices."""
        with self.graph.colocate_with(self._handle, ignore_existing=True):
            return state_ops.resource_gather(self._handle, indices, self._dtype, name=name or "Gather")

    def initialized_value(self):
        """The value, or the initial value when not initialized yet: for initial values of other variables."""
        with self.graph.as_default(), init_scope(self.graph):
            return cond_ops.cond(self.is_initialized(), self.read_value, lambda: self._initial_value)

    def is_initialized(self, name=None):
        """A bool tensor: whether the variable has a value in the session that runs it."""
        with self.graph.as_default(), self.graph.colocate_with(self._handle, ignore_existing=True):
            return state_ops.var_is_initialized_op(self._handle, name=name or "IsInitialized")

    def eval(self, session=None):
        return get_default_session_or_raise(session, self._graph_element).run(self)

    def load(self, value, session=None):
        """Sets the value from Python by feeding the initializer (adds no ops to the graph)."""
        session = get_default_session_or_raise(session, self._graph_element)
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    def _dense_var_to_tensor(self, dtype=None, name=None, as_ref=False):
        if dtype is not None and dtypes.as_dtype(dtype) is not self._dtype:
            raise ValueError(f"Incompatible type conversion requested to type {dtypes.as_dtype(dtype).name} for "
                             f"variable {self.name} of type {self._dtype.name}; use tf.cast on its value")
        return self._handle if as_ref else self.value()

    # ---- updating -------------------------------------------------------------------------------------
    def _update(self, builder, value, name, read_value):
        value = convert_to_tensor(value, dtype=self._dtype)
        if not self._shape.is_compatible_with(value.shape):
            raise ValueError(f"cannot assign a value of shape {value.shape} to variable {self.name} of shape "
                             f"{self._shape}")
        with self.graph.colocate_with(self._handle, ignore_existing=True):
            op = builder(self._handle, value, name=name)
        return _UnreadVariable(self, op) if read_value else op

    def _assigned(self, op):
        """What an update of this variable returns: it runs ``op`` when fetched, and reads after it as a tensor."""
        return _UnreadVariable(self, op)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Sets the value. Returns something that runs the assignment and, used as a tensor, reads after it."""
        return self._update(state_ops.assign_variable_op, value, name, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """Adds ``delta`` in place (always under the variable's lock, as TF's resource variables)."""
        return self._update(state_ops.assign_add_variable_op, delta, name, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._update(state_ops.assign_sub_variable_op, delta, name, read_value)

    def _scatter(self, op_type, sparse_delta, name):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta!r}")
        updates = convert_to_tensor(sparse_delta.values, dtype=self._dtype)
        with self.graph.colocate_with(self._handle, ignore_existing=True):
            op = state_ops.resource_scatter(op_type, self._handle, sparse_delta.indices, updates, name=name)
        return _UnreadVariable(self, op)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterUpdate", sparse_delta, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterAdd", sparse_delta, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterSub", sparse_delta, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterMul", sparse_delta, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterDiv", sparse_delta, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterMin", sparse_delta, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ResourceScatterMax", sparse_delta, name)

    def count_up_to(self, limit):
        """Increments the variable and returns its old value; OutOfRangeError once it reached ``limit``."""
        with self.graph.colocate_with(self._handle, ignore_existing=True):
            return state_ops.resource_count_up_to(self._handle, limit, self._dtype)


VariableV1 = Variable


class _UnreadVariable(Variable):
    """The result of an assignment: runs it when fetched or waited on, and reads after it as a tensor."""

    def __init__(self, variable, parent_op):  # noqa: B903 - shares the variable's state instead of making one
        self.__dict__.update(variable.__dict__)
        self._parent_op = parent_op
        self._cached_value = None
        with variable.graph.as_default(), variable.graph.control_dependencies([parent_op]):
            self._graph_element = variable._read()

    @property
    def name(self):
        return self._parent_op.name

    @property
    def op(self):
        return self._parent_op

    def _read(self, name="ReadVariableOp"):
        with self.graph.control_dependencies([self._parent_op]):
            return super()._read(name)

    def _update(self, builder, value, name, read_value):
        with self.graph.control_dependencies([self._parent_op]):
            return super()._update(builder, value, name, read_value)

    def _scatter(self, op_type, sparse_delta, name):
        with self.graph.control_dependencies([self._parent_op]):
            return super()._scatter(op_type, sparse_delta, name)

    def sparse_read(self, indices, name=None):
        with self.graph.control_dependencies([self._parent_op]):
            return super().sparse_read(indices, name)


def _slice_variable(variable, key):
    """``variable[key]``: a slice of its value that can also be assigned (``v[1:3].assign(value)``)."""
    return slicing_ops.slice_helper(variable, key, var=variable)


attach_operators(Variable)  # + - * / ... and indexing act on the variable's value, as on a tensor
Variable.__getitem__ = _slice_variable


register_tensor_conversion_function(
    Variable, lambda v, dtype=None, name=None, as_ref=False: v._dense_var_to_tensor(dtype, name, as_ref))


# ---- collections -----------------------------------------------------------------------------------
def global_variables(scope=None):
    """Variables shared across machines and saved in checkpoints (``GraphKeys.GLOBAL_VARIABLES``)."""
    return graph_mod.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables():
    return global_variables()


def local_variables(scope=None):
    """Per-process variables such as epoch counters (``GraphKeys.LOCAL_VARIABLES``)."""
    return graph_mod.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None):
    return graph_mod.get_collection(GraphKeys.MODEL_VARIABLES, scope)


def trainable_variables(scope=None):
    """Variables optimizers update by default (``GraphKeys.TRAINABLE_VARIABLES``)."""
    return graph_mod.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def moving_average_variables(scope=None):
    return graph_mod.get_collection("moving_average_variables", scope)


# ---- initialization ----------------------------------------------------------------------------------
def variables_initializer(var_list, name="init"):
    """One op running the initializers of ``var_list`` (a no-op for an empty list)."""
    var_list = list(var_list)
    if not var_list:
        return control_flow_ops.no_op(name=name)
    return control_flow_ops.group(*[v.initializer for v in var_list], name=name)


def initialize_variables(var_list, name="init"):
    return variables_initializer(var_list, name=name)


def global_variables_initializer():
    return variables_initializer(global_variables())


def initialize_all_variables():
    return global_variables_initializer()


def local_variables_initializer():
    return variables_initializer(local_variables())


def initialize_local_variables():
    return local_variables_initializer()


def _default_var_list(var_list):
    return global_variables() + local_variables() if var_list is None else list(var_list)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor with the names of the variables in ``var_list`` that have no value yet."""
    var_list = _default_var_list(var_list)
    with graph_mod.name_scope(name):
        if not var_list:
            return array_ops.constant(np.array([], dtype=object), dtype=dtypes.string)
        initialized = concat_split_ops.stack([v.is_initialized() for v in var_list])
        names = array_ops.constant([v.op.name for v in var_list], dtype=dtypes.string)
        return mask_ops.boolean_mask(names, comparison_ops.logical_not(initialized))


def assert_variables_initialized(var_list=None):
    """An op that fails with FailedPreconditionError naming the first uninitialized variable it reads."""
    var_list = _default_var_list(var_list)
    if not var_list:
        return None
    return control_flow_ops.group(*[v.read_value() for v in var_list], name="assert_variables_initialized")

