"""The per-graph store behind ``tf.get_variable``: creates a variable once, finds it again when reusing.

Its errors are TF1's, so a model that forgets ``reuse=True`` (or sets it before the first build) is
told so by name, with the line that created the existing variable.
"""

import inspect
import logging

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops, partitioned_variables as pv, slicing_ops, variables

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


def _no_argument_callable(initializer):
    try:
        params = inspect.signature(initializer).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def _check_matches(found, action, name, shape, dtype):
    """A reused variable (plain or partitioned) must have the shape and dtype asked for."""
    if not shape.is_compatible_with(found.get_shape()):
        raise ValueError(f"Trying to {action} {name}, but specified shape {shape} and found shape "
                         f"{found.get_shape()}.")
    if dtype is not found.dtype:
        raise ValueError(f"Trying to {action} {name}, but specified dtype {dtype.name} and found dtype "
                         f"{found.dtype.name}.")


def default_initializer(name, dtype):
    """glorot_uniform for floating variables, zeros for integers, booleans and strings (TF1)."""
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool or dtype is dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


class VariableStore:
    """Full name -> Variable (or PartitionedVariable) for one graph."""

    def __init__(self):
        self._vars = {}
        self._partitioned_vars = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     custom_getter=None, constraint=None):
        dtype = dtypes.as_dtype(dtype)
        trainable = True if trainable is None else trainable
        kwargs = dict(shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                      trainable=trainable, collections=collections, caching_device=caching_device,
                      partitioner=partitioner, validate_shape=validate_shape, constraint=constraint)
        if custom_getter is not None:
            if not callable(custom_getter):
                raise ValueError(f"the custom_getter must be a callable, got {custom_getter!r}")
            return custom_getter(getter=self._true_getter, name=name, **kwargs)
        return self._true_getter(name, **kwargs)

    def _true_getter(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                     trainable=True, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     constraint=None, use_resource=None, synchronization=None, aggregation=None):
        # A custom getter may pass TF1's use_resource, synchronization and aggregation on: ignored, as in
        # VariableScope.get_variable.
        dtype = dtypes.as_dtype(dtype)
        args = (name, shape, dtype, initializer, regularizer, reuse, trainable, collections, caching_device,
                validate_shape, constraint)
        if partitioner is not None or (reuse is True and name in self._partitioned_vars):
            return self._partitioned(partitioner, *args)
        if f"{name}/part_0" in self._vars:
            raise ValueError(f"No partitioner was provided, but a partitioned version of the variable was found: "
                             f"{name}/part_0. Perhaps a variable of the same name was already created with "
                             f"partitioning?")
        return self._single(*args)

    def _single(self, name, shape, dtype, initializer, regularizer, reuse, trainable, collections, caching_device,
                validate_shape, constraint, partition_info=None):
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError(f"If initializer is a constant, do not specify shape (variable {name!r}).")
        shape = tensor_shape.as_shape(shape)
        if name in self._vars:
            found = self._vars[name]
            if reuse is False:
                file, line, fn = found.op.traceback
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                                 f"reuse=tf.AUTO_REUSE in VarScope? Originally defined at {file}:{line} in {fn}")
            _check_matches(found, "share variable", name, shape, dtype)
            return found
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). Did you "
                             f"mean to set reuse=tf.AUTO_REUSE in VarScope?")
        if initializer is None:
            initializer = default_initializer(name, dtype)
        variable_dtype = None
        if from_value:
            initial_value = initializer
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape.is_fully_defined():
                def initial_value(init=initializer, full=shape.as_list()):
                    return init(full, dtype=dtype, partition_info=partition_info)
                variable_dtype = dtype
            elif _no_argument_callable(initializer):
                initial_value = initializer
            else:
                raise ValueError(f"The initializer passed for variable {name!r} is not valid: give a fully defined "
                                 f"shape (got {shape}) with an initializer such as tf.zeros_initializer(), or a "
                                 f"callable with no arguments and no shape")
        graph = graph_mod.get_default_graph()
        with variables.init_scope(graph):
            v = variables.Variable(initial_value, trainable=trainable, collections=collections, name=name,
                                   caching_device=caching_device, dtype=variable_dtype, validate_shape=validate_shape,
                                   constraint=constraint)
        self._vars[name] = v
        _log.debug("created variable %s with shape %s", v.name, shape)
        if regularizer:
            self._regularize(v, name, regularizer)
        return v

    @staticmethod
    def _regularize(variable, name, regularizer):
        graph = variable.graph
        with graph.colocate_with(variable), graph.name_scope(f"{name}/Regularizer/"), variables.init_scope(graph):
            loss = regularizer(variable)
        if loss is not None:
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def _partitioned(self, partitioner, name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
                     caching_device, validate_shape, constraint):
        if name in self._vars:
            raise ValueError(f"A partitioner was provided, but an unpartitioned version of the variable was found: "
                             f"{name}. Perhaps a variable of the same name was already created without "
                             f"partitioning?")
        shape = tensor_shape.as_shape(shape)
        if isinstance(initializer, Tensor):
            shape = shape.merge_with(initializer.shape)
        partitions = pv.call_partitioner(partitioner, shape, dtype) if (not reuse or partitioner) else None
        if name in self._partitioned_vars:
            found = self._partitioned_vars[name]
            if reuse is False:
                raise ValueError(f"Partitioned variable with name {name} already exists. Did you mean to set "
                                 f"reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            _check_matches(found, "reuse partitioned variable", name, shape, dtype)
            if partitions is not None and found._get_partitions() != partitions:
                raise ValueError(f"Trying to reuse partitioned variable {name}, but specified partitions "
                                 f"{partitions} and found partitions {found._get_partitions()}.")
            return found
        if reuse is True:
            raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with "
                             f"tf.get_variable(). Did you mean to set reuse=False or reuse=tf.AUTO_REUSE in VarScope?")
        slice_dim, num_slices = pv.slice_dim_and_count(partitions)
        shards = []
        for i, (offset, shard_shape) in enumerate(pv.slices(shape.as_list(), num_slices, slice_dim)):
            info = pv.PartitionInfo(shape.as_list(), offset)
            shard_name = f"{name}/part_{i}"
            init, init_shape, shard_dtype = initializer, shard_shape, dtype
            if initializer is not None and not callable(initializer):
                with graph_mod.name_scope(shard_name + "/PartitionedInitializer"):
                    value = initializer if isinstance(initializer, Tensor) else convert_to_tensor(initializer, dtype)
                    init, init_shape, shard_dtype = slicing_ops.slice(value, offset, shard_shape), None, value.dtype
            with graph_mod.name_scope(None):
                shard = self._single(shard_name, init_shape, shard_dtype, init, regularizer, reuse, trainable,
                                     collections, caching_device, validate_shape, constraint, partition_info=info)
            shard._set_save_slice_info(variables.SaveSliceInfo(name, shape.as_list(), offset, shard_shape))
            shards.append(shard)
        result = pv.PartitionedVariable(name, shape, dtype, shards, partitions)
        self._partitioned_vars[name] = result
        return result
