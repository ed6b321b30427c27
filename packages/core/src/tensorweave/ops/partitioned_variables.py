"""Partitioned variables: one logical variable stored as shards along one axis, and the partitioners.

``get_variable(..., partitioner=tf.fixed_size_partitioner(n))`` makes shards ``name/part_i``, each a
Variable that a device setter can place on its own parameter server; ``tf.nn.embedding_lookup`` reads
only the rows it needs from each shard, and a checkpoint stores the shards as one tensor.
"""

import math

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.tensor_conversion import register_tensor_conversion_function
from tensorweave.ops import array_ops, concat_split_ops, control_flow_ops

__all__ = ["fixed_size_partitioner", "min_max_variable_partitioner", "variable_axis_size_partitioner"]


class PartitionInfo:
    """What an initializer needs to fill one shard: the full shape and where the shard starts."""

    def __init__(self, full_shape, var_offset):
        if len(full_shape) != len(var_offset):
            raise ValueError(f"full_shape {full_shape} and var_offset {var_offset} must have the same rank")
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape):
        """The offset of the shard along its one sliced dimension."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self.var_offset[dim]

    def single_slice_dim(self, shape):
        """The dimension along which ``shape`` is a slice of the full shape (None if it is the whole)."""
        sliced = [i for i, (s, f) in enumerate(zip(shape, self.full_shape)) if s != f]
        if len(sliced) > 1:
            raise ValueError(f"a shard of shape {shape} of a variable of shape {self.full_shape} is sliced along "
                             f"more than one dimension")
        return sliced[0] if sliced else None


def slices(full_shape, num_slices, slice_dim):
    """(offset, shape) of each shard: the first ``full % num_slices`` shards get one extra row."""
    extra = full_shape[slice_dim] % num_slices
    base = full_shape[slice_dim] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = base + (1 if i < extra else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]


def call_partitioner(partitioner, shape, dtype):
    """The partitioner's per-axis shard counts for ``shape``, checked as TF1 does."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, (list, tuple)):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing!r}")
    if len(slicing) != shape.ndims:
        raise ValueError(f"Partitioner returned a partition list that does not match the Variable's rank: "
                         f"{slicing} vs. {shape}")
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, partitioning: {slicing}")
    return list(slicing)


def slice_dim_and_count(partitions):
    for dim, count in enumerate(partitions):
        if count != 1:
            return dim, count
    return 0, 1


class PartitionedVariable:
    """A variable split into shards along one axis; iterating gives the shards, using it as a tensor
    concatenates them."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not variable_list:
            raise ValueError(f"a PartitionedVariable needs at least one shard (creating {name!r})")
        if len(partitions) != tensor_shape.as_shape(shape).ndims:
            raise ValueError(f"partitions {partitions} do not match the rank of shape {shape}")
        self._name = name
        self._shape = tensor_shape.as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._variable_list = sorted(variable_list, key=lambda v: v._get_save_slice_info().var_offset)
        self._partitions = list(partitions)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        return len(self._variable_list)

    def __repr__(self):
        return f"<PartitionedVariable '{self._name}' shape={self._shape} dtype={self._dtype.name} " \
               f"shards={len(self._variable_list)}>"

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _get_variable_list(self):
        return self._variable_list

    def _get_partitions(self):
        return self._partitions

    def _partition_axis(self):
        return slice_dim_and_count(self._partitions)[0]

    def as_tensor(self):
        """All shards concatenated into one tensor (a fresh read of each)."""
        values = [v.value() for v in self._variable_list]
        if len(values) == 1:
            with graph_mod.name_scope(None):
                return array_ops.identity(values[0], name=self._name)
        with graph_mod.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = concat_split_ops.concat(values, self._partition_axis())
        with graph_mod.name_scope(None):
            return array_ops.identity(concatenated, name=self._name)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Assigns a full value (split along the partition axis), a list of shard values, or another
        PartitionedVariable shard by shard."""
        if isinstance(value, PartitionedVariable):
            parts = list(value)
        elif isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(f"assigning {len(value)} values to the {len(self._variable_list)} shards of "
                                 f"{self._name}")
            parts = value
        else:
            axis = self._partition_axis()
            sizes = [v.shape[axis].value for v in self._variable_list]
            parts = concat_split_ops.split(value, sizes, axis=axis)
        assigns = [v.assign(p, use_locking=use_locking, read_value=read_value)
                   for v, p in zip(self._variable_list, parts)]
        return assigns if read_value else control_flow_ops.group(*assigns, name=name or f"{self._name}/Assign")


def _convert(value, dtype=None, name=None, as_ref=False):
    if as_ref:
        raise ValueError(f"a PartitionedVariable ({value.name}) cannot be converted to a reference")
    if dtype is not None and dtypes.as_dtype(dtype) is not value.dtype:
        raise ValueError(f"Incompatible type conversion requested to type {dtypes.as_dtype(dtype).name} for "
                         f"partitioned variable {value.name} of type {value.dtype.name}")
    return value.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _convert)


# ---- partitioners: fn(shape=TensorShape, dtype=DType) -> shards per axis -----------------------------
def _element_size(dtype, bytes_per_string_element):
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype is dtypes.string else dtype.size


def fixed_size_partitioner(num_shards, axis=0):
    """``num_shards`` shards along ``axis`` (fewer if the axis is shorter)."""
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")

    def partitioner(shape, dtype=None):  # a fixed count needs no dtype
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, shape[axis].value)
        return partitions
    return partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None):
    """As many shards along ``axis`` as keep each under ``max_shard_bytes`` (at most ``max_shards``)."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards is not None and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def partitioner(shape, dtype):
        shape = tensor_shape.as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        bytes_per_slice = shape.num_elements() / shape[axis].value * _element_size(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        shards = int(math.ceil(shape[axis].value / slices_per_shard))
        partitions = [1] * shape.ndims
        partitions[axis] = min(max_shards, shards) if max_shards else shards
        return partitions
    return partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16):
    """Shards of at least ``min_slice_size`` bytes along ``axis``, at most ``max_partitions`` of them."""
    def partitioner(shape, dtype):
        shape = tensor_shape.as_shape(shape)
        if axis >= shape.ndims:
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is only {shape}")
        total_bytes = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        partitions = [1] * shape.ndims
        partitions[axis] = max(1, min(shape[axis].value, max_partitions, int(math.ceil(total_bytes / min_slice_size))))
        return partitions
    return partitioner
