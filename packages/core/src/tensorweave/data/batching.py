"""padded_batch and unbatch: the batching transformations whose element structure takes some working out."""

import numpy as np

from tensorweave import dtypes
from tensorweave.data import structure
from tensorweave.data.dataset_op import dataset_variant, int64_scalar
from tensorweave.framework import tensor_shape
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape


def _padded_shape_tensor(padded_shape, component_shape):
    """``padded_shape`` as an int64 vector (-1 for None) and as a static shape; checked against the component."""
    try:
        static = tensor_shape.as_shape(padded_shape)
        tensor = convert_to_tensor([-1 if d is None else d for d in static.as_list()], dtype=dtypes.int64,
                                   name="padded_shape")
    except (TypeError, ValueError):
        tensor = convert_to_tensor(padded_shape, dtype=dtypes.int64, name="padded_shape")
        if tensor.shape.ndims not in (None, 1):
            raise ValueError(f"padded_batch: a padded shape must be an int64 vector, but {padded_shape} has shape "
                             f"{tensor.shape}") from None
        static = constant_value_as_shape(tensor)
    if static.ndims is not None and component_shape.ndims is not None and (
            static.ndims != component_shape.ndims or any(
                p is not None and c is not None and p < c
                for p, c in zip(static.as_list(), component_shape.as_list()))):
        raise ValueError(f"padded_batch: the padded shape {static} is not compatible with the shape "
                         f"{component_shape} of the corresponding input component")
    return tensor, static


def _padding_value(value, dtype):
    """A scalar tensor of ``dtype``: 0 or b'' when None; Python and numpy values are converted to ``dtype``."""
    if value is None:
        value = b"" if dtype == dtypes.string else np.zeros((), dtype.as_numpy_dtype)
    tensor = convert_to_tensor(value, dtype=None if isinstance(value, Tensor) else dtype, name="padding_value")
    if not tensor.shape.is_compatible_with([]):
        raise ValueError(f"padded_batch: padding values must be scalars, but got shape {tensor.shape}")
    if tensor.dtype != dtype:
        raise TypeError(f"padded_batch: the padding value's type {tensor.dtype.name} does not match type "
                        f"{dtype.name} of the corresponding input component")
    return tensor


def padded_batch(dataset, batch_size, padded_shapes, padding_values, drop_remainder):
    """The PaddedBatchDatasetV2 op of ``dataset``: its variant and its element structure."""
    specs = structure.flatten(dataset._structure)
    shapes_tree = structure.map_structure(lambda s: s.shape, dataset._structure)
    try:
        flat_padded = structure.flatten_up_to(shapes_tree, padded_shapes)
    except (ValueError, TypeError):
        raise ValueError(f"padded_batch: padded_shapes {padded_shapes!r} does not have the structure of the "
                         f"elements ({structure.describe(dataset._structure)})") from None
    if padding_values is None or not structure.is_nested(padding_values):
        flat_values = [padding_values] * len(specs)  # one value (or the defaults) for every component
    else:
        try:
            flat_values = structure.flatten_up_to(shapes_tree, padding_values)
        except (ValueError, TypeError):
            raise ValueError(f"padded_batch: padding_values {padding_values!r} does not have the structure of the "
                             f"elements ({structure.describe(dataset._structure)})") from None
    shapes = [_padded_shape_tensor(p, s.shape) for p, s in zip(flat_padded, specs)]
    values = [_padding_value(v, s.dtype) for v, s in zip(flat_values, specs)]
    size = int64_scalar(batch_size, "batch_size")
    drop = convert_to_tensor(drop_remainder, dtype=dtypes.bool, name="drop_remainder")
    n, dropping = constant_value(size), constant_value(drop)
    dim = int(n) if n is not None and dropping is not None and bool(dropping) else None
    out = structure.pack(dataset._structure, [
        structure.TensorSpec(tensor_shape.TensorShape([dim]).concatenate(static), s.dtype)
        for (_, static), s in zip(shapes, specs)])
    inputs = [dataset._variant_tensor, size, [t for t, _ in shapes], values, drop]
    return dataset_variant("PaddedBatchDatasetV2", inputs, out, typed=False), out


def unbatch(dataset):
    """The UnbatchDataset op of ``dataset``: its variant and its element structure."""
    def inner(spec):
        if spec.shape.ndims == 0:
            raise ValueError("Dataset.unbatch: cannot unbatch an input with scalar components")
        return structure.TensorSpec(spec.shape[1:] if spec.shape.ndims else None, spec.dtype)

    out = structure.map_structure(inner, dataset._structure)
    return dataset_variant("UnbatchDataset", [dataset._variant_tensor], out), out
