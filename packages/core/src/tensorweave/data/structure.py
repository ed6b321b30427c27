"""The structure of a dataset's elements: nests of tensors with tf.data's rules, and their specs.

tf.data's nesting differs from ``tf.nest`` in one way users meet: tuples (namedtuples too) and dicts are
structure, but a *list* is one value, converted to a tensor (``from_tensor_slices([1, 2, 3])`` is one
component; a function returning ``[a, b]`` returns one stacked tensor). Dicts flatten in sorted key order.
An element's structure is kept as the same nest with a ``TensorSpec`` per component.
"""

import optree

from tensorweave import dtypes as dtypes_mod
from tensorweave.framework import tensor_shape
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor


def _is_leaf(value):
    return isinstance(value, list)


def flatten(structure):
    return optree.tree_leaves(structure, is_leaf=_is_leaf, none_is_leaf=True)


def _spec(structure):
    return optree.tree_structure(structure, is_leaf=_is_leaf, none_is_leaf=True)


def pack(structure, flat):
    """``flat`` arranged like ``structure``."""
    return optree.tree_unflatten(_spec(structure), list(flat))


def map_structure(fn, *structures):
    return optree.tree_map(fn, *structures, is_leaf=_is_leaf, none_is_leaf=True)


def is_nested(value):
    return not _spec(value).is_leaf()


def flatten_up_to(shallow, value):
    """``value``'s subtrees at the leaves of ``shallow`` (TypeError or ValueError when it lacks them)."""
    return _spec(shallow).flatten_up_to(value)


def same_structure(a, b):
    return _spec(a) == _spec(b)


def describe(structure):
    """The nesting with leaves as ``*``, for error messages: ``(*, {'a': *})``."""
    text = repr(_spec(structure))
    return text[text.index("(") + 1:text.rindex(",")] if text.startswith("PyTreeSpec(") else text


class Structured:
    """TF1's ``output_types``/``output_shapes``/``output_classes`` and ``element_spec`` of the element structure
    (``_structure``) a dataset or an iterator hands out."""

    @property
    def output_types(self):
        return types_of(self._structure)

    @property
    def output_shapes(self):
        return shapes_of(self._structure)

    @property
    def output_classes(self):
        return classes_of(self._structure)

    @property
    def element_spec(self):
        return self._structure


class TensorSpec:
    """The dtype and (possibly partial) static shape of one component (TF's ``tf.TensorSpec``)."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=dtypes_mod.float32, name=None):
        self.shape = tensor_shape.as_shape(shape)
        self.dtype = dtypes_mod.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor):
        return cls(tensor.shape, tensor.dtype)

    def is_compatible_with(self, other):
        return self.dtype == other.dtype and self.shape.is_compatible_with(other.shape)

    def most_specific_compatible(self, other):
        """The spec both fit: their common dimensions, unknown where they differ; None for other dtypes."""
        if self.dtype != other.dtype:
            return None
        return TensorSpec(self.shape.most_specific_compatible_shape(other.shape), self.dtype)

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and self.dtype == other.dtype and self.shape == other.shape

    __hash__ = None

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


def normalize_element(element, what="element"):
    """``element`` with every component a Tensor (lists and Python values converted, as tf.data does)."""
    leaves = flatten(element)
    if not leaves:
        raise ValueError(f"{what} has no components (got {element!r}); a dataset element needs at least one tensor")
    converted = []
    for i, leaf in enumerate(leaves):
        if leaf is None:
            raise TypeError(f"{what} has a None component (at {describe(element)}); every component must be a "
                            f"tensor or convertible to one")
        if isinstance(leaf, Tensor):
            converted.append(leaf)
            continue
        if hasattr(leaf, "_as_graph_element") or hasattr(leaf, "_variant_tensor"):
            raise TypeError(f"{what}: component {i} is {type(leaf).__name__} {leaf!r}, which is not a tensor")
        try:
            converted.append(convert_to_tensor(leaf, name=f"component_{i}"))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: component {i} ({leaf!r}) cannot be converted to a tensor: {e}") from None
    return pack(element, converted)


def spec_of(element):
    """The structure of TensorSpecs of a normalized ``element``."""
    return map_structure(TensorSpec.from_tensor, element)


def types_of(structure):
    return map_structure(lambda s: s.dtype, structure)


def shapes_of(structure):
    return map_structure(lambda s: s.shape, structure)


def classes_of(structure):
    return map_structure(lambda s: Tensor, structure)


def flat_types(structure):
    return [s.dtype for s in flatten(structure)]


def flat_shapes(structure):
    return [s.shape for s in flatten(structure)]


def from_types_and_shapes(output_types, output_shapes=None):
    """A spec structure from ``output_types`` and optional ``output_shapes`` (same nesting; a shape may be
    given as a list of dims, which is one leaf here, as in TF)."""
    if output_shapes is None:
        return map_structure(lambda t: TensorSpec(None, t), output_types)
    flat_t = flatten(output_types)
    try:
        flat_s = flatten_up_to(output_types, output_shapes)
    except (ValueError, TypeError):
        raise ValueError(f"output_shapes {output_shapes!r} does not have the nesting of output_types "
                         f"{output_types!r}") from None
    return pack(output_types, [TensorSpec(s, t) for t, s in zip(flat_t, flat_s)])
