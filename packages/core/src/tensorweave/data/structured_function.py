"""A user's function of dataset elements (map, filter, flat_map, interleave), traced into the graph.

The element arrives as its structure: a tuple is spread over the function's arguments (``lambda x, y:``),
anything else (a dict, a namedtuple, one tensor) is one argument, as in TF. What the function returns is
normalized as an element (lists become tensors), or must be a Dataset for flat_map and interleave.
"""

from tensorweave.data import structure
from tensorweave.ops import traced_function


class StructuredFunction:
    """``fn`` traced for elements of ``input_structure``; ``output_structure`` is what it returns (specs).

    ``function`` is the TracedFunction for the op's ``func`` attr, ``captured`` the tensors for the op's
    ``other_arguments``; for a function returning a Dataset (``returns``: the Dataset class, which this module
    cannot import, as the Dataset module imports this one), ``output_dataset`` is the one traced.
    """

    def __init__(self, fn, input_structure, what, name, returns=None):
        if not callable(fn):
            raise TypeError(f"{what}: expected a function of the dataset's elements, got {fn!r}")
        self.what = what
        self.output_structure = None
        self.output_dataset = None

        def body(*args):
            element = structure.pack(input_structure, args)
            result = fn(*element) if type(element) is tuple else fn(element)
            if returns is not None:
                return [self._dataset_result(result, returns)]
            result = structure.normalize_element(result, f"the value returned by the function given to {what}")
            self.output_structure = structure.spec_of(result)
            return structure.flatten(result)

        specs = structure.flatten(input_structure)
        self.function = traced_function.trace(body, [s.dtype for s in specs], [s.shape for s in specs], name)

    def _dataset_result(self, result, dataset_class):
        if not isinstance(result, dataset_class):
            raise TypeError(f"the function given to {self.what} must return a tf.data.Dataset, got "
                            f"{type(result).__name__} {result!r}")
        self.output_dataset = result
        self.output_structure = result._structure
        return result._variant_tensor

    @property
    def captured(self):
        return self.function.captured
