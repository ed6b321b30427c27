"""Graph: operations and tensors, name scopes, control dependencies, device and colocation scopes,
collections; and the default-graph stack."""

import contextlib
import re
import threading

from tensorweave.framework import device_spec
from tensorweave.framework.graph_io import graph_to_graph_def
from tensorweave.framework.operation import Operation, user_frame
from tensorweave.framework.tensor import Tensor


class GraphKeys:
    """Standard collection names (TF1's ``tf.GraphKeys``)."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = GLOBAL_VARIABLES
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    UPDATE_OPS = "update_ops"
    GLOBAL_STEP = "global_step"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SAVERS = "savers"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    TRAIN_OP = "train_op"
    ASSET_FILEPATHS = "asset_filepaths"
    TABLE_INITIALIZERS = "table_initializer"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"


_VALID_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


class Graph:
    """A dataflow graph. Build ops inside ``with graph.as_default():``; run it with a Session."""

    def __init__(self):
        self._lock = threading.RLock()
        self._ops_by_name = {}
        self._ops = []
        self._names_in_use = {}
        self._id_counter = 0
        self._version = 0
        self._finalized = False
        self._collections = {}
        self.seed = None
        self._thread_local = threading.local()
        self._gradient_override_map = {}

    # ---- per-thread building state -------------------------------------------------------
    @property
    def _state(self):
        st = self._thread_local
        if not hasattr(st, "name_stack"):
            st.name_stack = ""
            st.control_deps = []  # list of lists of ops; a None entry clears the outer ones
            st.device_stack = []  # device functions or specs
            st.colocation_stack = []
            st.control_flow_context = None
        return st

    def _next_id(self):
        self._id_counter += 1
        return self._id_counter

    @property
    def version(self):
        return self._version

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        """Makes the graph read-only; later op creation raises (catches graph growth in training loops)."""
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    def as_default(self):
        return _default_graph_stack.get_controller(self)

    # ---- names -----------------------------------------------------------------------------
    def unique_name(self, name, mark_as_used=True):
        if self._state.name_stack:
            name = f"{self._state.name_stack}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = key
            while f"{base}_{count}" in self._names_in_use:
                count += 1
            if mark_as_used:
                self._names_in_use[f"{base}_{count}"] = 1
            name = f"{name}_{count}"
        return name

    def get_name_scope(self):
        return self._state.name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens a scope; ``name`` ending in '/' re-enters an existing scope; None or '' resets to the root."""
        st = self._state
        old = st.name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            if not _VALID_SCOPE.match(name):
                raise ValueError(f"{name!r} is not a valid scope name")
            new = name[:-1]
        else:
            if not _VALID_SCOPE.match(name):
                raise ValueError(f"{name!r} is not a valid scope name (letters, digits, '_', '.', '-', '/')")
            new = self.unique_name(name)
        st.name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            st.name_stack = old

    # ---- scopes that shape new ops --------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """New ops wait for ``control_inputs`` (ops or tensors); ``None`` clears outer dependencies."""
        st = self._state
        if control_inputs is None:
            entry = None
        else:
            entry = []
            for c in control_inputs:
                if hasattr(c, "_as_graph_element"):
                    c = c._as_graph_element()
                if isinstance(c, Tensor):
                    c = c.op
                if not isinstance(c, Operation):
                    raise TypeError(f"control_dependencies expects Operations or Tensors, got {c!r}")
                entry.append(c)
        st.control_deps.append(entry)
        try:
            yield
        finally:
            st.control_deps.pop()

    def _current_control_deps(self):
        deps = []
        for entry in reversed(self._state.control_deps):
            if entry is None:
                break
            deps.extend(entry)
        return deps

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Places new ops: a spec string, a DeviceSpec, a function op -> spec, or None to clear."""
        st = self._state
        st.device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            st.device_stack.pop()

    def _apply_device_functions(self, op):
        spec = device_spec.DeviceSpec()
        for entry in self._state.device_stack:
            if entry is None:
                spec = device_spec.DeviceSpec()
            elif callable(entry) and not isinstance(entry, (str, device_spec.DeviceSpec)):
                op._device = spec.to_string()
                result = entry(op)
                spec = device_spec.DeviceSpec.from_string(result or "") if not isinstance(
                    result, device_spec.DeviceSpec) else result.copy()
            else:
                spec.merge_from(device_spec.DeviceSpec.from_string(entry))
        return spec.to_string()

    @contextlib.contextmanager
    def container(self, container_name):
        """Resources of stateful ops created inside live in ``container_name`` (``Session.reset`` clears it)."""
        st = self._state
        old = self.current_container
        st.container = container_name
        try:
            yield container_name
        finally:
            st.container = old

    @property
    def current_container(self):
        return getattr(self._state, "container", "")

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """New ops go on the same device as ``op`` (a variable, tensor or operation)."""
        if op is None:
            target = None
        else:
            if hasattr(op, "_as_graph_element"):
                op = op._as_graph_element()
            if hasattr(op, "op") and not isinstance(op, Operation):
                op = op.op
            target = op
        st = self._state
        saved_devices = st.device_stack
        if ignore_existing:
            saved_coloc, st.colocation_stack = st.colocation_stack, []
        st.colocation_stack.append(target)
        st.device_stack = []  # the colocation target decides the device
        try:
            yield
        finally:
            st.colocation_stack.pop()
            st.device_stack = saved_devices
            if ignore_existing:
                st.colocation_stack = saved_coloc

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Within this scope, ops of type K use the gradient registered as ``op_type_map[K]``."""
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    def _get_control_flow_context(self):
        return self._state.control_flow_context

    def _set_control_flow_context(self, ctx):
        self._state.control_flow_context = ctx

    # ---- creating ops ------------------------------------------------------------------
    def create_op(self, op_def, inputs, attrs, output_dtypes, name):
        """Adds an op whose inputs are already tensors of this graph and attrs are complete."""
        if self._finalized:
            raise RuntimeError(f"graph is finalized and cannot be modified (adding {op_def.name} {name!r}); "
                               f"build every op before the training loop starts")
        with self._lock:
            if name.endswith("/"):  # TF: a name scope's own name, used exactly (the op takes its scope's name)
                name = name[:-1]
                if name in self._ops_by_name:
                    raise ValueError(f"Duplicate node name in graph: {name!r}")
                self._names_in_use.setdefault(name.lower(), 1)
            else:
                name = self.unique_name(name)
            if not _VALID_NAME.match(name):
                raise ValueError(f"{name!r} is not a valid op name")
            st = self._state
            deps = [d for d in self._current_control_deps() if not any(t.op is d for t in inputs)]
            op = Operation(self, op_def, name, inputs, attrs, output_dtypes, deps, traceback=user_frame())
            colocation = [c for c in st.colocation_stack if c is not None]
            if colocation:
                groups = []
                for target in colocation:
                    for g in target.colocation_groups():
                        if g not in groups:
                            groups.append(g)
                op._attrs["_class"] = groups
                op._device = colocation[-1].device
            else:
                op._device = self._apply_device_functions(op)
            if op_def.name in self._gradient_override_map:
                op._attrs["_gradient_op_type"] = self._gradient_override_map[op_def.name]
            self._ops_by_name[name] = op
            self._ops.append(op)
            self._version += 1
            ctx = st.control_flow_context
            if ctx is not None:
                op._control_flow_context = ctx
                ctx.add_op(op)
            return op

    # ---- lookup ------------------------------------------------------------------------------
    def get_operations(self):
        return list(self._ops)

    def get_operation_by_name(self, name):
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"the graph has no operation named {name!r}") from None

    def get_tensor_by_name(self, name):
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"{name!r} is not a tensor name; tensor names look like 'op_name:0'")
        op = self.get_operation_by_name(op_name)
        if int(index) >= len(op._outputs):
            raise ValueError(f"operation {op_name!r} has {len(op._outputs)} outputs; {name!r} does not exist")
        return op._outputs[int(index)]

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError(f"{obj!r} names an operation, but a tensor is needed here ('{obj}:0')")
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"tensor {obj.name} is not an element of this graph")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"operation {obj.name} is not an element of this graph")
            return obj
        raise TypeError(f"cannot interpret {obj!r} as a graph element (a Tensor, Operation or their name)")

    def is_fetchable(self, obj):
        return True

    # ---- collections -------------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in ([names] if isinstance(names, str) else set(names)):
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        regex = re.compile(scope)
        return [i for i in items if hasattr(i, "name") and regex.match(i.name)]

    def get_all_collection_keys(self):
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # ---- serialization -------------------------------------------------------------------
    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as TF's GraphDef proto (``from_version`` is accepted as TF1 does; every op is written)."""
        return graph_to_graph_def(self, add_shapes=add_shapes)

    def __repr__(self):
        return f"<tf.Graph with {len(self._ops)} ops>"


class _DefaultGraphStack(threading.local):
    """Per-thread stack of ``as_default`` graphs over one process-wide default graph."""

    _global_default = None
    _global_lock = threading.Lock()

    def __init__(self):
        self.stack = []

    def get_default(self):
        if self.stack:
            return self.stack[-1]
        cls = type(self)
        if cls._global_default is None:
            with cls._global_lock:
                if cls._global_default is None:
                    cls._global_default = Graph()
        return cls._global_default

    def reset(self):
        if self.stack:
            raise AssertionError("reset_default_graph() called inside a `with graph.as_default()` block; "
                                 "call it outside any graph scope")
        type(self)._global_default = Graph()

    @contextlib.contextmanager
    def get_controller(self, graph):
        self.stack.append(graph)
        try:
            yield graph
        finally:
            self.stack.pop()


_default_graph_stack = _DefaultGraphStack()


def get_default_graph():
    return _default_graph_stack.get_default()


def reset_default_graph():
    _default_graph_stack.reset()


def _graph_of(values):
    for v in values:
        g = getattr(v, "graph", None)
        if isinstance(g, Graph):
            return g
    return get_default_graph()


def name_scope(name, default_name=None, values=None):
    """TF1's ``tf.name_scope(name, default_name=None, values=None)``."""
    graph = _graph_of(values or [])
    return graph.name_scope(name if name is not None else default_name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def container(container_name):
    return get_default_graph().container(container_name)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)
