"""``tf.data.Dataset``: a graph value (a dataset op's ``variant`` output) with the structure of its elements.

Each method adds one dataset op (``TensorSliceDataset``, ``MapDataset``, ``BatchDatasetV2``, ...) to the graph
and returns a new Dataset; nothing runs until an iterator is initialized in a session
(``tensorweave.data.iterator_ops``). Functions given to map, filter, flat_map and interleave are traced into
the graph once (``structured_function``); tensors they use from outside are read when the iterator starts.
"""

from tensorweave import dtypes
from tensorweave.data import batching, generator_source, iterator_ops, structure
from tensorweave.data.dataset_op import dataset_variant, int64_scalar
from tensorweave.data.structured_function import StructuredFunction
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import random_seed, tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import array_ops, comparison_ops, io_ops, logging_ops, math_ops, shape_ops

AUTOTUNE = -1


def make_dataset(op_type, inputs, element_structure, attrs=None, name=None, typed=True):
    """Adds the op and wraps its output (``dataset_op.dataset_variant``) as a Dataset."""
    return Dataset(dataset_variant(op_type, inputs, element_structure, attrs, name, typed), element_structure)


class Dataset(structure.Structured):
    """A sequence of elements, each a (nested) structure of tensors (TF1's ``tf.data.Dataset``)."""

    def __init__(self, variant_tensor, element_structure):
        self._variant_tensor = variant_tensor
        self._structure = element_structure

    # ---- structure ------------------------------------------------------------------------------------
    def __repr__(self):
        return f"<Dataset shapes: {self.output_shapes}, types: {self.output_types}>"

    def __iter__(self):
        raise TypeError("a tf.data.Dataset is a graph value and cannot be iterated in Python; take its elements "
                        "with dataset.make_one_shot_iterator().get_next() and Session.run")

    # ---- sources ---------------------------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors):
        """A dataset of one element, ``tensors``."""
        element = structure.normalize_element(tensors, "Dataset.from_tensors")
        flat = structure.flatten(element)
        return make_dataset("TensorDataset", [flat], structure.spec_of(element), typed=False)

    @staticmethod
    def from_tensor_slices(tensors):
        """The slices of ``tensors`` along their first dimension (every component must have the same size)."""
        element = structure.normalize_element(tensors, "Dataset.from_tensor_slices")
        flat = structure.flatten(element)
        size = tensor_shape.Dimension(None)
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError(f"Dataset.from_tensor_slices: component {t.name} is a scalar; every component "
                                 f"needs a first dimension to slice (use from_tensors for one element)")
            if t.shape.ndims is not None:
                if not size.is_compatible_with(t.shape[0]):
                    raise ValueError(f"Dataset.from_tensor_slices: the components have different first dimensions "
                                     f"({size} and {t.shape[0]} in {t.name}); they must all have the same size")
                size = size.merge_with(t.shape[0])
        specs = structure.pack(element, [structure.TensorSpec(t.shape[1:] if t.shape.ndims else None, t.dtype)
                                         for t in flat])
        return make_dataset("TensorSliceDataset", [flat], specs, typed=False)

    @staticmethod
    def range(*args):
        """int64 elements as Python's ``range(stop)``, ``range(start, stop)``, ``range(start, stop, step)``."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 arguments (stop, or start, stop[, step]), got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
        inputs = [int64_scalar(v, n) for v, n in ((start, "start"), (stop, "stop"), (step, "step"))]
        return make_dataset("RangeDataset", inputs, structure.TensorSpec([], dtypes.int64))

    @staticmethod
    def zip(datasets):
        """Elements of several datasets side by side, nested as ``datasets`` (a tuple or dict of datasets)."""
        flat = structure.flatten(datasets)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError(f"Dataset.zip takes a (nested) tuple or dict of datasets, but it holds "
                                f"{type(d).__name__} {d!r}")
        specs = structure.pack(datasets, [d._structure for d in flat])
        return make_dataset("ZipDataset", [[d._variant_tensor for d in flat]], specs)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """The elements ``generator(*args)`` yields, each converted to ``output_types`` (and checked against
        ``output_shapes``); the generator is called again for every iteration, on the iterator's thread."""
        return Dataset(*generator_source.from_generator(generator, output_types, output_shapes, args))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The names of the files matching ``file_pattern`` (a glob or a list of globs), shuffled unless
        ``shuffle=False``; no match fails the iterator's initialization with InvalidArgumentError."""
        matching, count = _matching_files(file_pattern)
        dataset = Dataset.from_tensor_slices(matching)
        if shuffle is None or shuffle:
            dataset = dataset.shuffle(math_ops.maximum(count, 1), seed=seed)
        return dataset

    # ---- combining --------------------------------------------------------------------------------------
    def concatenate(self, dataset):
        """This dataset's elements, then ``dataset``'s (same structure and dtypes)."""
        if not structure.same_structure(self._structure, dataset._structure):
            raise TypeError(f"Dataset.concatenate: the datasets have different structures "
                            f"({structure.describe(self._structure)} and {structure.describe(dataset._structure)})")
        mine, theirs = structure.flatten(self._structure), structure.flatten(dataset._structure)
        if any(a.dtype != b.dtype for a, b in zip(mine, theirs)):
            raise TypeError(f"Dataset.concatenate: the datasets have different types {self.output_types} and "
                            f"{dataset.output_types}")
        specs = structure.pack(self._structure, [a.most_specific_compatible(b) for a, b in zip(mine, theirs)])
        return make_dataset("ConcatenateDataset", [self._variant_tensor, dataset._variant_tensor], specs)

    def repeat(self, count=None):
        """The elements ``count`` times (None or -1: forever)."""
        return self._same("RepeatDataset", [int64_scalar(-1 if count is None else count, "count")])

    def take(self, count):
        """At most the first ``count`` elements (-1: all)."""
        return self._same("TakeDataset", [int64_scalar(count, "count")])

    def skip(self, count):
        """All but the first ``count`` elements (-1: skip everything)."""
        return self._same("SkipDataset", [int64_scalar(count, "count")])

    def cache(self, filename=""):
        """The elements computed once and replayed by later iterations: in memory, or in files at ``filename``."""
        return self._same("CacheDataset", [convert_to_tensor(filename, dtype=dtypes.string, name="filename")])

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        """Each element drawn uniformly from a buffer of the next ``buffer_size`` elements. Seeded by
        ``seed`` and the graph seed as TF1's random ops; with ``reshuffle_each_iteration`` (the default) each
        iteration (epoch, re-initialization) draws a new order, repeatable from the seeds."""
        seed, seed2 = random_seed.get_seed(seed)
        inputs = [int64_scalar(buffer_size, "buffer_size"), int64_scalar(seed or 0, "seed"),
                  int64_scalar(seed2 or 0, "seed2")]
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._same("ShuffleDataset", inputs, {"reshuffle_each_iteration": reshuffle})

    def prefetch(self, buffer_size):
        """The elements computed ahead by a background thread, up to ``buffer_size`` of them (AUTOTUNE: -1)."""
        return self._same("PrefetchDataset", [int64_scalar(buffer_size, "buffer_size")])

    def _same(self, op_type, inputs, attrs=None):
        return make_dataset(op_type, [self._variant_tensor] + inputs, self._structure, attrs)

    # ---- functions of elements ----------------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None):
        """``map_func(element)`` for each element; with ``num_parallel_calls`` that many calls run at once on
        background threads, the results still in input order."""
        fn = StructuredFunction(map_func, self._structure, "Dataset.map", "map_fn")
        inputs = [self._variant_tensor, fn.captured]
        attrs = {"f": fn.function}
        if num_parallel_calls is None:
            return make_dataset("MapDataset", inputs, fn.output_structure, attrs)
        calls = convert_to_tensor(num_parallel_calls, dtype=dtypes.int32, name="num_parallel_calls")
        return make_dataset("ParallelMapDataset", inputs + [calls], fn.output_structure, attrs)

    def filter(self, predicate):
        """The elements for which ``predicate(element)`` (a scalar bool tensor) is true."""
        fn = StructuredFunction(predicate, self._structure, "Dataset.filter", "filter_fn")
        specs = structure.flatten(fn.output_structure)
        if len(specs) != 1 or specs[0].dtype != dtypes.bool or not specs[0].shape.is_compatible_with([]):
            raise ValueError(f"Invalid `predicate`: it must return a tf.bool scalar tensor, but its return type "
                             f"is {fn.output_structure}")
        return make_dataset("FilterDataset", [self._variant_tensor, fn.captured], self._structure,
                            {"predicate": fn.function})

    def flat_map(self, map_func):
        """The elements of ``map_func(element)`` (a Dataset) for each element in turn."""
        fn = StructuredFunction(map_func, self._structure, "Dataset.flat_map", "flat_map_fn", returns=Dataset)
        return make_dataset("FlatMapDataset", [self._variant_tensor, fn.captured], fn.output_structure,
                            {"f": fn.function})

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1, num_parallel_calls=None):
        """The datasets ``map_func`` makes of ``cycle_length`` elements at a time, ``block_length`` elements
        from each in turn; a finished one is replaced by the next element's. ``num_parallel_calls`` reads
        the open ones ahead on background threads, in the same order."""
        fn = StructuredFunction(map_func, self._structure, "Dataset.interleave", "interleave_fn", returns=Dataset)
        inputs = [self._variant_tensor, fn.captured, int64_scalar(cycle_length, "cycle_length"),
                  int64_scalar(block_length, "block_length")]
        if num_parallel_calls is None:
            return make_dataset("InterleaveDataset", inputs, fn.output_structure, {"f": fn.function})
        inputs.append(int64_scalar(num_parallel_calls, "num_parallel_calls"))
        return make_dataset("ParallelInterleaveDatasetV2", inputs, fn.output_structure, {"f": fn.function})

    def apply(self, transformation_func):
        """``transformation_func(self)``, which must return a Dataset (``tf.data.experimental`` helpers)."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(f"Dataset.apply: the transformation must return a Dataset, got {type(result).__name__}")
        return result

    # ---- batching ------------------------------------------------------------------------------------------
    def batch(self, batch_size, drop_remainder=False):
        """Consecutive elements stacked along a new first dimension; the last batch may be smaller unless
        ``drop_remainder``. Components must have the same shape within a batch (see padded_batch)."""
        size = int64_scalar(batch_size, "batch_size")
        drop = convert_to_tensor(drop_remainder, dtype=dtypes.bool, name="drop_remainder")
        specs = batched_structure(self._structure, size, drop)
        return make_dataset("BatchDatasetV2", [self._variant_tensor, size, drop], specs)

    def padded_batch(self, batch_size, padded_shapes, padding_values=None, drop_remainder=False):
        """As batch, each component first padded to ``padded_shapes`` (None dimensions: the batch's longest)
        with ``padding_values`` (0 or b'' by default)."""
        return Dataset(*batching.padded_batch(self, batch_size, padded_shapes, padding_values, drop_remainder))

    def unbatch(self):
        """The slices of each element along its first dimension."""
        return Dataset(*batching.unbatch(self))

    # ---- iterators -------------------------------------------------------------------------------------------
    def make_one_shot_iterator(self):
        """An iterator that needs no initialization; the dataset must not depend on placeholders or state."""
        return iterator_ops.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator started (and restarted) by running its ``initializer``."""
        return iterator_ops.make_initializable_iterator(self, shared_name)


DatasetV1 = Dataset


def batched_structure(element_structure, batch_size, drop_remainder):
    """The element specs with a batch dimension: static when the batch size is a constant and the
    remainder is dropped, else unknown (the last batch may be smaller)."""
    size, drop = constant_value(batch_size), constant_value(drop_remainder)
    dim = int(size) if size is not None and drop is not None and bool(drop) else None
    return structure.map_structure(
        lambda s: structure.TensorSpec(tensor_shape.TensorShape([dim]).concatenate(s.shape), s.dtype),
        element_structure)


def _matching_files(file_pattern):
    """As TF 1.15's list_files: MatchingFiles, then an Assert that something matched; the names and their count."""
    with graph_mod.get_default_graph().name_scope("list_files"):
        pattern = convert_to_tensor(file_pattern, dtype=dtypes.string, name="file_pattern")
        matching = io_ops.matching_files(pattern)
        count = shape_ops.shape(matching, out_type=dtypes.int64)[0]
        found = comparison_ops.greater(count, 0, name="match_not_empty")
        message = io_ops.string_join(["No files matched pattern: ", pattern], name="message")
        check = logging_ops.Assert(found, [message], summarize=1, name="assert_not_empty")
        with graph_mod.control_dependencies([check]):
            return array_ops.identity(matching), count
