"""``tf.get_variable`` and ``tf.variable_scope``: variables named by scope, created once and shared by name.

Each graph keeps a store of the variables made by ``get_variable`` (full name -> variable) and a current
VariableScope (reuse mode, default initializer, regularizer, partitioner, dtype, custom getter). As in
TF1, a variable scope opens a name scope of the same name, variable names depend only on variable
scopes, and re-entering a scope restarts the numbering of default-named sub-scopes, so a model built
twice (the second time with ``reuse=True``) finds the same variables.
"""

import copy
import enum
import logging
import threading

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import numpy_value
from tensorweave.ops.partitioned_variables import (  # noqa: F401 - tf.* names
    fixed_size_partitioner, min_max_variable_partitioner, variable_axis_size_partitioner,
)

__all__ = ["AUTO_REUSE", "VariableScope", "fixed_size_partitioner", "get_local_variable", "get_variable",
           "get_variable_scope", "min_max_variable_partitioner", "no_regularizer", "variable_axis_size_partitioner",
           "variable_op_scope", "variable_scope"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_):
    """Use as ``regularizer=`` to turn off a scope's default regularizer for one variable."""
    return None


class VariableScope:
    """The defaults ``get_variable`` uses inside a ``variable_scope``; ``reuse`` is False, True or AUTO_REUSE."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None, partitioner=None,
                 custom_getter=None, name_scope="", dtype=dtypes.float32, use_resource=None, constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self):
        """From now on, get_variable in this scope returns existing variables."""
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_caching_device(self, caching_device):
        self._caching_device = caching_device

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter):
        self._custom_getter = custom_getter

    def set_dtype(self, dtype):
        self._dtype = dtypes.as_dtype(dtype)

    def set_use_resource(self, use_resource):
        self._use_resource = use_resource

    def set_constraint(self, constraint):
        self._constraint = constraint

    def get_collection(self, name):
        return graph_mod.get_collection(name, (self._name + "/") if self._name else None)

    def global_variables(self):
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def trainable_variables(self):
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def local_variables(self):
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None, regularizer=None,
                     reuse=None, trainable=None, collections=None, caching_device=None, partitioner=None,
                     validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                     synchronization=None, aggregation=None):
        """``var_store.get_variable`` with this scope's defaults and its name as prefix.

        ``use_resource``, ``synchronization`` and ``aggregation`` are TF1's and ignored: every variable here is
        one kind, and there are no distribution strategies to synchronize or aggregate for."""
        full_name = f"{self._name}/{name}" if self._name else name  # "" names the scope itself ("scope/")
        if reuse is None:
            reuse = self._reuse
        if dtype is not None and initializer is not None and not callable(initializer):
            init_dtype = initializer.dtype if isinstance(initializer, Tensor) else \
                dtypes.as_dtype(numpy_value(initializer).dtype)
            if init_dtype is not dtypes.as_dtype(dtype):
                raise ValueError(f"Initializer type '{init_dtype.name}' and explicit dtype "
                                 f"'{dtypes.as_dtype(dtype).name}' don't match (variable {full_name!r}).")
        with graph_mod.name_scope(None):
            return var_store.get_variable(
                full_name, shape=shape, dtype=self._dtype if dtype is None else dtype,
                initializer=self._initializer if initializer is None else initializer,
                regularizer=self._regularizer if regularizer is None else regularizer, reuse=reuse,
                trainable=trainable, collections=collections,
                caching_device=self._caching_device if caching_device is None else caching_device,
                partitioner=self._partitioner if partitioner is None else partitioner, validate_shape=validate_shape,
                custom_getter=self._custom_getter if custom_getter is None else custom_getter,
                constraint=self._constraint if constraint is None else constraint)


class _ScopeStore:
    """Per graph: the current scope (per thread) and how often each scope name was opened."""

    def __init__(self):
        self._local = threading.local()
        self.variable_scopes_count = {}

    @property
    def current_scope(self):
        if not hasattr(self._local, "scope"):
            self._local.scope = VariableScope(False)
        return self._local.scope

    @current_scope.setter
    def current_scope(self, scope):
        self._local.scope = scope

    def open_variable_scope(self, scope_name):
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name):
        for name in self.variable_scopes_count:
            if name.startswith(scope_name + "/"):
                self.variable_scopes_count[name] = 0


def _graph_singleton(key, make, graph=None):
    graph = graph or graph_mod.get_default_graph()
    found = graph.get_collection(key)
    if found:
        return found[0]
    made = make()
    graph.add_to_collection(key, made)
    return made


def _scope_store(graph=None):
    return _graph_singleton(("__varscope",), _ScopeStore, graph)


def _variable_store(graph=None):
    from tensorweave.ops.variable_store import VariableStore  # on the first get_variable: start-up time
    return _graph_singleton(("__variable_store",), VariableStore, graph)


def get_variable_scope():
    """The current VariableScope of the default graph."""
    return _scope_store().current_scope


def _unique_variable_scope(prefix):
    store = _scope_store()
    current = store.current_scope.name
    base = f"{current}/{prefix}" if current else prefix
    if not store.variable_scopes_count.get(base):
        return prefix
    index = 1
    while store.variable_scopes_count.get(f"{base}_{index}"):
        index += 1
    return f"{prefix}_{index}"


def _wrap_custom_getter(custom_getter, outer):
    """Nested scopes' custom getters compose: the inner one calls the outer one as its getter."""
    if outer is None:
        return custom_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(lambda *a, **kw: outer(getter, *a, **kw), *args, **kwargs)
    return wrapped


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None, collections=None,
                 caching_device=None, partitioner=None, validate_shape=True, use_resource=None, custom_getter=None,
                 constraint=None, synchronization=None, aggregation=None):
    """The variable ``<scope>/name``: created (with the scope's defaults) or, when reusing, found."""
    return get_variable_scope().get_variable(
        _variable_store(), name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable, collections=collections, caching_device=caching_device, partitioner=partitioner,
        validate_shape=validate_shape, use_resource=use_resource, custom_getter=custom_getter, constraint=constraint)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=False,
                       collections=None, caching_device=None, partitioner=None, validate_shape=True,
                       use_resource=None, custom_getter=None, constraint=None, synchronization=None, aggregation=None):
    """As get_variable, in LOCAL_VARIABLES and not trainable (``synchronization``, ``aggregation`` ignored)."""
    collections = [GraphKeys.LOCAL_VARIABLES] + list(collections or [])
    return get_variable(name, shape, dtype, initializer, regularizer, False, collections, caching_device,
                        partitioner, validate_shape, use_resource, custom_getter, constraint)


class variable_scope:  # noqa: N801 - TF's name
    """Opens a variable scope (and a name scope). ``name_or_scope`` is a name or a captured VariableScope;
    with None, ``default_name`` is made unique. ``reuse`` True/AUTO_REUSE is inherited by sub-scopes."""

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                 use_resource=None, constraint=None, auxiliary_name_scope=True):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
            raise TypeError(f"VariableScope: name_or_scope must be a string or VariableScope, got {name_or_scope!r}")
        if reuse is False:
            reuse = None  # False means "inherit", as in TF1
        if reuse not in (None, True, AUTO_REUSE):
            raise ValueError(f"reuse must be True, False, None or tf.AUTO_REUSE, got {reuse!r}")
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"The custom_getter must be a callable, got {custom_getter!r}")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values
        self._defaults = {"initializer": initializer, "regularizer": regularizer, "caching_device": caching_device,
                          "partitioner": partitioner, "dtype": dtype, "use_resource": use_resource,
                          "constraint": constraint}
        self._custom_getter = custom_getter
        self._reuse = reuse
        self._auxiliary_name_scope = auxiliary_name_scope

    def __enter__(self):
        self._graph_context = graph_mod._graph_of(self._values or []).as_default()
        graph = self._graph_context.__enter__()
        store = _scope_store(graph)
        old = store.current_scope
        scope = self._name_or_scope
        if scope is None and self._reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        self._name_scope = None
        if self._auxiliary_name_scope:
            scope_name = self._default_name if scope is None else (
                scope if isinstance(scope, str) else scope.name.split("/")[-1])
            if scope_name:
                self._name_scope = graph.name_scope(scope_name)
        else:
            current = graph.get_name_scope()
            self._name_scope = graph.name_scope(current + "/" if current else None)
        entered_name_scope = self._name_scope.__enter__() if self._name_scope is not None else ""
        if isinstance(scope, VariableScope):
            self._new_name = scope.name
            store.open_variable_scope(self._new_name)
            self._saved_counts = copy.copy(store.variable_scopes_count)
            new = VariableScope(scope.reuse if not self._reuse else self._reuse, scope.name, scope.initializer,
                                scope.regularizer, scope.caching_device, scope.partitioner, scope.custom_getter,
                                scope.original_name_scope, scope.dtype, scope.use_resource, scope.constraint)
            outer_getter = scope.custom_getter
        else:
            relative = scope if scope is not None else _unique_variable_scope(self._default_name)
            self._new_name = f"{old.name}/{relative}" if old.name else relative
            self._saved_counts = None
            new = VariableScope(self._reuse or old.reuse, self._new_name, old.initializer, old.regularizer,
                                old.caching_device, old.partitioner, old.custom_getter,
                                entered_name_scope, old.dtype, old.use_resource, old.constraint)
            store.open_variable_scope(self._new_name)
            outer_getter = old.custom_getter
        for attr, value in self._defaults.items():
            if value is not None:
                getattr(new, f"set_{attr}")(value)
        if self._custom_getter is not None:
            new.set_custom_getter(_wrap_custom_getter(self._custom_getter, outer_getter))
        self._store, self._old = store, old
        store.current_scope = new
        return new

    def __exit__(self, exc_type, exc, tb):
        store = self._store
        if store.current_scope is not None and store.current_scope.name != self._new_name:
            _log.warning("variable scopes exited out of order (leaving %r while in %r)", self._new_name,
                         store.current_scope.name)
        store.current_scope = self._old
        if self._saved_counts is not None:
            store.variable_scopes_count = self._saved_counts
        else:
            store.close_variable_subscopes(self._new_name)
        if self._name_scope is not None:
            self._name_scope.__exit__(exc_type, exc, tb)
        self._graph_context.__exit__(exc_type, exc, tb)
        return False


def variable_op_scope(values, name_or_scope, default_name=None, initializer=None, regularizer=None,
                      caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                      use_resource=None, constraint=None):
    """The deprecated argument order of ``variable_scope``."""
    return variable_scope(name_or_scope, default_name=default_name, values=values, initializer=initializer,
                          regularizer=regularizer, caching_device=caching_device, partitioner=partitioner,
                          custom_getter=custom_getter, reuse=reuse, dtype=dtype, use_resource=use_resource,
                          constraint=constraint)

