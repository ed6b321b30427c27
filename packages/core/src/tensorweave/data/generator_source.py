"""``Dataset.from_generator``: the elements of a Python generator, converted and checked against a structure.

The ``GeneratorDataset`` op carries a GeneratorSource in its ``generator`` attr; the kernel calls
``source.elements(args)`` for each iteration (on the iterator's thread) and gets flat lists of numpy values.
The checks and messages are TF's; a value is converted only where numpy casts it without losing its kind
(an int yields to a float component, a float to an int component is refused).
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.data import structure
from tensorweave.data.dataset_op import dataset_variant
from tensorweave.framework import tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor


class GeneratorSource:
    """The user's generator and the element structure its yields must have."""

    def __init__(self, generator, element_structure):
        self.generator = generator
        self.structure = element_structure
        self.types = structure.types_of(element_structure)
        self._specs = structure.flatten(element_structure)

    def elements(self, args):
        """Iterates ``generator(*args)``, each yielded element as a flat list of numpy values."""
        for value in self.generator(*args):
            yield self.flat_values(value)

    def flat_values(self, value):
        try:
            flat = structure.flatten_up_to(self.types, value)
        except (TypeError, ValueError):
            raise TypeError(f"`generator` yielded an element that did not match the expected structure. The "
                            f"expected structure was {self.types}, but the yielded element was {value!r}.") from None
        return [_convert(v, spec) for v, spec in zip(flat, self._specs)]

    def to_attr(self):
        """A GraphDef records only the generator's name (Python code is not part of a graph)."""
        return {"python_generator": getattr(self.generator, "__qualname__", repr(self.generator))}


def _strings(value):
    array = np.array(value, dtype=object)
    out = np.empty(array.shape, dtype=object)
    for i, x in enumerate(array.reshape(-1)):
        x = x.encode() if isinstance(x, str) else x
        if not isinstance(x, bytes):
            raise TypeError
        out.flat[i] = x
    return out


def _convert(value, spec):
    want = spec.dtype
    try:
        if want == dtypes.string:
            array = _strings(value)
        else:
            array = np.asarray(value)
            if array.dtype.kind in "USO" or not np.can_cast(array.dtype, want.as_numpy_dtype, casting="same_kind"):
                raise TypeError
            array = array.astype(want.as_numpy_dtype, copy=False)
    except (TypeError, ValueError):
        raise TypeError(f"`generator` yielded an element that could not be converted to the expected type. The "
                        f"expected type was {want.name}, but the yielded element was {value!r}.") from None
    if not spec.shape.is_compatible_with(array.shape):
        raise TypeError(f"`generator` yielded an element of shape {tensor_shape.TensorShape(array.shape)} where an "
                        f"element of shape {spec.shape} was expected.")
    return array


def from_generator(generator, output_types, output_shapes=None, args=None):
    """The GeneratorDataset op: its variant and its element structure (``Dataset.from_generator`` wraps them)."""
    if not callable(generator):
        raise TypeError(f"Dataset.from_generator: `generator` must be callable, got {generator!r}")
    specs = structure.from_types_and_shapes(structure.map_structure(dtypes.as_dtype, output_types), output_shapes)
    arg_tensors = [convert_to_tensor(a, name=f"generator_arg_{i}") for i, a in enumerate(args or ())]
    attrs = {"generator": GeneratorSource(generator, specs)}
    return dataset_variant("GeneratorDataset", [arg_tensors], specs, attrs), specs
