"""``tf.data.Iterator``: a resource in the session's containers that hands out a dataset's elements.

An iterator's state belongs to the session and outlives runs: each run of ``get_next()`` takes the next
element, and the end of the dataset raises OutOfRangeError (which ``MonitoredTrainingSession`` and
``try/except tf.errors.OutOfRangeError`` loops stop on). Running an initializer again restarts it. Kinds:
one-shot (``OneShotIterator``, started the first time it runs), initializable (``IteratorV2`` +
``MakeIterator``), reinitializable (``from_structure`` + ``make_initializer`` for several datasets of one
structure) and feedable (``from_string_handle``, switched between iterators by feeding ``string_handle()``).
"""

from tensorweave import dtypes
from tensorweave.data import structure
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.traced_function import TracedFunction

_NO_INITIALIZER = ("the iterator does not have an initializer: it was created by make_one_shot_iterator() or "
                   "from_string_handle(). For an initializable iterator, use make_initializable_iterator()")
_CAPTURABLE = {"Assert", "MatchingFiles"}  # stateful ops a one-shot iterator may capture by value (list_files)


def _structure_attrs(specs):
    return {"output_types": structure.flat_types(specs), "output_shapes": structure.flat_shapes(specs)}


class Iterator(structure.Structured):
    """Hands out the elements of the dataset it was initialized with (TF1's ``tf.data.Iterator``)."""

    def __init__(self, iterator_resource, initializer, element_structure):
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._structure = element_structure
        self._string_handle = None

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An uninitialized iterator for datasets of this structure; ``make_initializer(dataset)`` starts it."""
        specs = structure.from_types_and_shapes(structure.map_structure(dtypes.as_dtype, output_types), output_shapes)
        attrs = dict(_structure_attrs(specs), shared_name=shared_name or "",
                     container=graph_mod.get_default_graph().current_container)
        return Iterator(apply_op("IteratorV2", [], attrs, name="Iterator"), None, specs)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """The iterator named by ``string_handle`` (a string tensor, usually a placeholder fed with the value of
        another iterator's ``string_handle()``), which must hand out elements of this structure."""
        specs = structure.from_types_and_shapes(structure.map_structure(dtypes.as_dtype, output_types), output_shapes)
        handle = convert_to_tensor(string_handle, dtype=dtypes.string, name="string_handle")
        resource = apply_op("IteratorFromStringHandleV2", [handle], _structure_attrs(specs),
                            name="IteratorFromStringHandle")
        return Iterator(resource, None, specs)

    # ---- ops ----------------------------------------------------------------------------------------
    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError(_NO_INITIALIZER)
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator on ``dataset``, whose structure must match the iterator's."""
        if not structure.same_structure(self._structure, dataset._structure):
            raise ValueError(f"make_initializer: the dataset's structure {structure.describe(dataset._structure)} "
                             f"is not the iterator's {structure.describe(self._structure)}")
        mine, theirs = structure.flatten(self._structure), structure.flatten(dataset._structure)
        if any(a.dtype != b.dtype for a, b in zip(mine, theirs)):
            raise TypeError(f"Expected output types {self.output_types} but got dataset with output types "
                            f"{dataset.output_types}.")
        if not all(a.shape.is_compatible_with(b.shape) for a, b in zip(mine, theirs)):
            raise TypeError(f"Expected output shapes compatible with {self.output_shapes} but got dataset with "
                            f"output shapes {dataset.output_shapes}.")
        return apply_op("MakeIterator", [dataset._variant_tensor, self._iterator_resource], name=name or "MakeIterator")

    def get_next(self, name=None):
        """The next element (a structure of tensors); each run takes a new one, OutOfRangeError after the last."""
        out = apply_op("IteratorGetNext", [self._iterator_resource], _structure_attrs(self._structure),
                       name=name or "IteratorGetNext")
        return structure.pack(self._structure, out)

    def string_handle(self, name=None):
        """A string tensor naming this iterator, to feed an iterator made by ``from_string_handle``."""
        if name is not None:
            return apply_op("IteratorToStringHandle", [self._iterator_resource], name=name)
        if self._string_handle is None:
            self._string_handle = apply_op("IteratorToStringHandle", [self._iterator_resource],
                                           name="IteratorToStringHandle")
        return self._string_handle


def make_initializable_iterator(dataset, shared_name=None):
    iterator = Iterator.from_structure(dataset.output_types, dataset.output_shapes, shared_name)
    iterator._initializer = iterator.make_initializer(dataset)
    return iterator


def make_one_shot_iterator(dataset):
    """The iterator computes the dataset's ops once, when it starts (TF captures them by value into a factory
    function), so the dataset must not depend on placeholders or state."""
    _check_capturable(dataset._variant_tensor.op)
    factory = TracedFunction.of_graph(f"{dataset._variant_tensor.op.name}_factory", [dataset._variant_tensor])
    attrs = dict(_structure_attrs(dataset._structure), dataset_factory=factory,
                 container=graph_mod.get_default_graph().current_container)
    return Iterator(apply_op("OneShotIterator", [], attrs, name="OneShotIterator"), None, dataset._structure)


def _check_capturable(op):
    seen, stack = set(), [op]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.op_def.is_placeholder:
            raise ValueError(f"Cannot capture a placeholder (name:{op.name}, type:{op.type}) by value: "
                             f"make_one_shot_iterator() needs a dataset that does not depend on fed values; use "
                             f"make_initializable_iterator() and feed the placeholder when running its initializer")
        if op.op_def.is_stateful and op.type not in _CAPTURABLE:
            raise ValueError(f"Cannot capture a stateful node (name:{op.name}, type:{op.type}) by value: "
                             f"make_one_shot_iterator() does not support a dataset that depends on a stateful "
                             f"object such as a tf.Variable or a queue; use make_initializable_iterator() instead")
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes
