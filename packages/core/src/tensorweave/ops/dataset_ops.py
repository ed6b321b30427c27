"""Dataset and iterator ops (TF's names): the graph side of ``tf.data``.

A dataset op outputs a scalar ``variant``: the definition of a dataset (its inputs' definitions, its
arguments, its functions), evaluated when an iterator is initialized. Ops that call a function per
element take it as a ``func`` attr (a ``TracedFunction``) and its captured tensors as ``other_arguments``.
Iterators are resources in the session's containers, as queues: ``IteratorV2`` (or ``OneShotIterator``)
makes one, ``MakeIterator`` starts it on a dataset, ``IteratorGetNext`` takes the next element and raises
OutOfRangeError at the end. The Dataset and Iterator classes in ``tensorweave.data`` build these ops.
"""

from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList

DEFS = OpDefList()

__all__ = []

_STRUCTURE = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_FUNCTION = ["Targuments: list(type) >= 0"]


def _dataset(name, inputs=(), attrs=(), doc="", structure=True):
    return DEFS.define(name, inputs=list(inputs), outputs=["handle: variant"],
                       attrs=list(attrs) + (_STRUCTURE if structure else []), grad=NOT_DIFFERENTIABLE,
                       shape_fn=common_shapes.scalar_shape, doc=doc)


_IN = "input_dataset: variant"
_ARGS = "other_arguments: Targuments"

# ---- sources ----------------------------------------------------------------------------------------
_dataset("TensorDataset", ["components: Toutput_types"], ["Toutput_types: list(type) >= 1",
                                                          "output_shapes: list(shape) >= 1"],
         "One element: the components.", structure=False)
_dataset("TensorSliceDataset", ["components: Toutput_types"], ["Toutput_types: list(type) >= 1",
                                                               "output_shapes: list(shape) >= 1"],
         "The slices of the components along their first dimension.", structure=False)
_dataset("RangeDataset", ["start: int64", "stop: int64", "step: int64"], doc="start, start + step, ... before stop.")
_dataset("GeneratorDataset", ["args: Targs"], ["generator: value", "Targs: list(type) >= 0"],
         "The elements a Python generator yields (``generator`` is called with ``args``' values per iteration).")
_dataset("TextLineDataset", ["filenames: string", "compression_type: string", "buffer_size: int64"],
         doc="The lines of text files, without their line ends.", structure=False)
_dataset("FixedLengthRecordDatasetV2", ["filenames: string", "header_bytes: int64", "record_bytes: int64",
                                        "footer_bytes: int64", "buffer_size: int64", "compression_type: string"],
         doc="Fixed-length records of binary files, between a header and a footer.", structure=False)
_dataset("TFRecordDataset", ["filenames: string", "compression_type: string", "buffer_size: int64"],
         doc="The records of TFRecord files.", structure=False)

# ---- combining and reshaping ------------------------------------------------------------------------------
_dataset("ZipDataset", ["input_datasets: N * variant"], ["N: int >= 1"], "Elements of several datasets side by side.")
_dataset("ConcatenateDataset", [_IN, "another_dataset: variant"], doc="One dataset's elements, then another's.")
_dataset("RepeatDataset", [_IN, "count: int64"], doc="The input ``count`` times (-1: forever).")
_dataset("TakeDataset", [_IN, "count: int64"], doc="The first ``count`` elements (-1: all).")
_dataset("SkipDataset", [_IN, "count: int64"], doc="All but the first ``count`` elements (-1: none).")
_dataset("CacheDataset", [_IN, "filename: string"],
         doc="The input, computed once: kept in memory (filename '') or in files, and replayed by later iterations.")
_dataset("ShuffleDataset", [_IN, "buffer_size: int64", "seed: int64", "seed2: int64"],
         ["reshuffle_each_iteration: bool = True"],
         "Each element drawn uniformly from a buffer of the next ``buffer_size`` input elements.")
_dataset("ShuffleAndRepeatDataset", [_IN, "buffer_size: int64", "seed: int64", "seed2: int64", "count: int64"],
         doc="Shuffle, then repeat ``count`` times, each epoch in a new order.")
_dataset("PrefetchDataset", [_IN, "buffer_size: int64"], ["slack_period: int = 0"],
         "The input, computed ahead by a background thread into a buffer of ``buffer_size`` elements.")
_dataset("BatchDatasetV2", [_IN, "batch_size: int64", "drop_remainder: bool"], ["parallel_copy: bool = False"],
         "Consecutive elements stacked along a new first dimension.")
_dataset("PaddedBatchDatasetV2", [_IN, "batch_size: int64", "padded_shapes: N * int64",
                                  "padding_values: Toutput_types", "drop_remainder: bool"],
         ["Toutput_types: list(type) >= 1", "output_shapes: list(shape) >= 1", "N: int >= 1",
          "parallel_copy: bool = False"],
         "Consecutive elements padded to common shapes and stacked.", structure=False)
_dataset("UnbatchDataset", [_IN], doc="The slices of each input element along its first dimension.")

# ---- functions of elements ------------------------------------------------------------------------------
_dataset("MapDataset", [_IN, _ARGS], ["f: func"] + _FUNCTION + [
    "use_inter_op_parallelism: bool = True", "preserve_cardinality: bool = False"], "f(element) for each element.")
_dataset("ParallelMapDataset", [_IN, _ARGS, "num_parallel_calls: int32"], ["f: func"] + _FUNCTION + [
    "use_inter_op_parallelism: bool = True", "sloppy: bool = False", "preserve_cardinality: bool = False"],
    "f(element) for each element, up to ``num_parallel_calls`` at once on background threads, in input order.")
_dataset("FilterDataset", [_IN, _ARGS], ["predicate: func"] + _FUNCTION,
         "The elements for which ``predicate`` is true.")
_dataset("FlatMapDataset", [_IN, _ARGS], ["f: func"] + _FUNCTION,
         "The elements of the dataset ``f(element)`` returns, for each element in turn.")
_dataset("InterleaveDataset", [_IN, _ARGS, "cycle_length: int64", "block_length: int64"], ["f: func"] + _FUNCTION,
         "The datasets ``f`` returns for ``cycle_length`` elements at a time, ``block_length`` elements of each "
         "in turn.")
_dataset("ParallelInterleaveDatasetV2",
         [_IN, _ARGS, "cycle_length: int64", "block_length: int64", "num_parallel_calls: int64"],
         ["f: func"] + _FUNCTION + ["sloppy: bool = False"],
         "As InterleaveDataset, in its order (``sloppy`` is accepted, not used), each open dataset read ahead by a "
         "background thread.")
_dataset("MapAndBatchDataset", [_IN, _ARGS, "batch_size: int64", "num_parallel_calls: int64", "drop_remainder: bool"],
         ["f: func"] + _FUNCTION + ["preserve_cardinality: bool = False"],
         "map then batch in one step, the map calls on up to ``num_parallel_calls`` background threads.")

# ---- iterators ----------------------------------------------------------------------------------------
_ITERATOR = {"grad": NOT_DIFFERENTIABLE, "is_stateful": True}
DEFS.define("IteratorV2", outputs=["handle: resource"], attrs=["shared_name: string", "container: string"] + _STRUCTURE,
            shape_fn=common_shapes.scalar_shape, doc="An iterator resource, started by MakeIterator.", **_ITERATOR)
DEFS.define("OneShotIterator", outputs=["handle: resource"],
            attrs=["dataset_factory: func", "container: string = ''", "shared_name: string = ''"] + _STRUCTURE,
            shape_fn=common_shapes.scalar_shape,
            doc="An iterator started the first time it runs in a session, on the dataset ``dataset_factory`` "
                "computes then (later runs keep it and compute nothing else).", **_ITERATOR)
DEFS.define("MakeIterator", inputs=["dataset: variant", "iterator: resource"],
            doc="(Re)starts the iterator on the dataset, dropping what it was iterating.", **_ITERATOR)
GET_NEXT = DEFS.define("IteratorGetNext", inputs=["iterator: resource"], outputs=["components: output_types"],
                       attrs=_STRUCTURE, doc="The next element; OutOfRangeError after the last.", **_ITERATOR)
DEFS.define("IteratorToStringHandle", inputs=["resource_handle: resource"], outputs=["string_handle: string"],
            shape_fn=common_shapes.scalar_shape, doc="A string naming the iterator, for IteratorFromStringHandleV2.",
            **_ITERATOR)
DEFS.define("IteratorFromStringHandleV2", inputs=["string_handle: string"], outputs=["resource_handle: resource"],
            attrs=["output_types: list(type) >= 0 = []", "output_shapes: list(shape) >= 0 = []"],
            shape_fn=common_shapes.scalar_shape,
            doc="The iterator a string handle names; its structure must match output_types and output_shapes.",
            **_ITERATOR)


@GET_NEXT.set_shape_fn
def _get_next_shape(op):
    return [tensor_shape.as_shape(s) for s in op.get_attr("output_shapes")]
