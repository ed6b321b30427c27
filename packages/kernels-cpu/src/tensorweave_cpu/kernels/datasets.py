"""CPU kernels of the dataset ops: each builds a dataset value (``tensorweave_cpu.data``) from its inputs.

Ops with a function are context kernels: the function runs in the session that ran the op
(``FunctionRunner``), with the op's ``other_arguments`` as its captured values.
"""

import numpy as np

from tensorweave.extension import FunctionRunner, KernelSet, errors

from tensorweave_cpu.data import background, batching, cache, files, sources, transforms
from tensorweave_cpu.data.base import FunctionCall, numpy_dtypes, scalar

KERNELS = KernelSet("CPU")


def _text(value):
    value = scalar(value, "a string argument")
    return value.decode() if isinstance(value, bytes) else str(value)


def _int(value, what):
    return int(scalar(value, what))


# ---- sources ------------------------------------------------------------------------------------------
@KERNELS.register("TensorDataset")
def _tensors(*components, Toutput_types):  # noqa: N803 - TF's attr name
    return sources.Tensors(components, numpy_dtypes(Toutput_types))


@KERNELS.register("TensorSliceDataset")
def _tensor_slices(*components, Toutput_types):  # noqa: N803
    return sources.TensorSlices(components, numpy_dtypes(Toutput_types))


@KERNELS.register("RangeDataset")
def _range(start, stop, step):
    return sources.Range(_int(start, "start"), _int(stop, "stop"), _int(step, "step"))


@KERNELS.register("GeneratorDataset")
def _generator(*args, generator, output_types):
    if not hasattr(generator, "flat_values"):
        raise errors.UnimplementedError(None, None, "this GeneratorDataset came from an imported graph, which cannot "
                                                    "carry its Python generator; build it with from_generator")
    return sources.Generator(generator, args, numpy_dtypes(output_types))


@KERNELS.register("ZipDataset")
def _zip(*datasets, output_types):
    return sources.Zip(datasets, numpy_dtypes(output_types))


@KERNELS.register("ConcatenateDataset")
def _concatenate(first, second, *, output_types):
    return sources.Concatenate(first, second, numpy_dtypes(output_types))


def _file_kernel(op_type, make):
    @KERNELS.register(op_type)
    def kernel(filenames, *args):
        return make(np.asarray(filenames, dtype=object), *args)
    return kernel


_file_kernel("TextLineDataset", lambda names, compression, buffer: files.TextLines(
    names, _text(compression), _int(buffer, "buffer_size")))
_file_kernel("TFRecordDataset", lambda names, compression, buffer: files.TFRecords(
    names, _text(compression), _int(buffer, "buffer_size")))
_file_kernel("FixedLengthRecordDatasetV2", lambda names, header, record, footer, buffer, compression:
             files.FixedLengthRecords(names, _int(header, "header_bytes"), _int(record, "record_bytes"),
                                      _int(footer, "footer_bytes"), _int(buffer, "buffer_size"), _text(compression)))


# ---- transformations of one input ----------------------------------------------------------------------
@KERNELS.register("RepeatDataset")
def _repeat(dataset, count):
    return transforms.Repeat(dataset, _int(count, "count"))


@KERNELS.register("TakeDataset")
def _take(dataset, count):
    return transforms.Take(dataset, _int(count, "count"))


@KERNELS.register("SkipDataset")
def _skip(dataset, count):
    return transforms.Skip(dataset, _int(count, "count"))


@KERNELS.register("CacheDataset")
def _cache(dataset, filename):
    return cache.Cache(dataset, _text(filename))


@KERNELS.register("ShuffleDataset")
def _shuffle(dataset, buffer_size, seed, seed2, *, reshuffle_each_iteration):
    return transforms.Shuffle(dataset, _int(buffer_size, "buffer_size"), _int(seed, "seed"), _int(seed2, "seed2"),
                              reshuffle_each_iteration)


@KERNELS.register("ShuffleAndRepeatDataset")
def _shuffle_and_repeat(dataset, buffer_size, seed, seed2, count):
    shuffled = transforms.Shuffle(dataset, _int(buffer_size, "buffer_size"), _int(seed, "seed"), _int(seed2, "seed2"),
                                  True)
    return transforms.Repeat(shuffled, _int(count, "count"))


@KERNELS.register("PrefetchDataset")
def _prefetch(dataset, buffer_size):
    return background.Prefetch(dataset, _int(buffer_size, "buffer_size"))


@KERNELS.register("BatchDatasetV2")
def _batch(dataset, batch_size, drop_remainder):
    return batching.Batch(dataset, _int(batch_size, "batch_size"), bool(scalar(drop_remainder, "drop_remainder")))


@KERNELS.register("PaddedBatchDatasetV2")
def _padded_batch(dataset, batch_size, *rest, N):  # noqa: N803 - TF's attr name
    shapes, values, drop = rest[:N], rest[N:-1], rest[-1]
    return batching.PaddedBatch(dataset, _int(batch_size, "batch_size"), shapes, values,
                                bool(scalar(drop, "drop_remainder")))


@KERNELS.register("UnbatchDataset")
def _unbatch(dataset):
    return batching.Unbatch(dataset)


# ---- functions of elements -------------------------------------------------------------------------------
def _bind(ctx, node, attr, captured):
    function = node.attrs[attr]
    if not hasattr(function, "outputs"):
        raise errors.UnimplementedError(None, None, (
            f"{node.op_type} {node.name!r} came from an imported graph, whose dataset functions cannot be run; "
            f"build the pipeline with tf.data in this program"))
    return FunctionCall(FunctionRunner(ctx.step.session, function), captured, node)


def _split(args, node):
    """(captured values, the inputs after them)."""
    n = len(node.attrs["Targuments"])
    return list(args[:n]), args[n:]


@KERNELS.register("MapDataset", context=True)
def _map(ctx, dataset, *args, node, output_types):
    captured, _ = _split(args, node)
    return transforms.Map(dataset, _bind(ctx, node, "f", captured), numpy_dtypes(output_types))


@KERNELS.register("ParallelMapDataset", context=True)
def _parallel_map(ctx, dataset, *args, node, output_types):
    captured, (calls,) = _split(args, node)
    return background.ParallelMap(dataset, _bind(ctx, node, "f", captured), _int(calls, "num_parallel_calls"),
                                  numpy_dtypes(output_types))


@KERNELS.register("FilterDataset", context=True)
def _filter(ctx, dataset, *args, node):
    captured, _ = _split(args, node)
    return transforms.Filter(dataset, _bind(ctx, node, "predicate", captured))


@KERNELS.register("FlatMapDataset", context=True)
def _flat_map(ctx, dataset, *args, node, output_types):
    captured, _ = _split(args, node)
    return transforms.FlatMap(dataset, _bind(ctx, node, "f", captured), numpy_dtypes(output_types))


def _cycle_length(value):
    cycle = _int(value, "cycle_length")
    return background.autotuned_threads() if cycle == background.AUTOTUNE else cycle


@KERNELS.register("InterleaveDataset", context=True)
def _interleave(ctx, dataset, *args, node, output_types):
    captured, (cycle, block) = _split(args, node)
    return transforms.Interleave(dataset, _bind(ctx, node, "f", captured), _cycle_length(cycle),
                                 _int(block, "block_length"), numpy_dtypes(output_types))


@KERNELS.register("ParallelInterleaveDatasetV2", context=True)
def _parallel_interleave(ctx, dataset, *args, node, output_types):
    captured, (cycle, block, calls) = _split(args, node)
    block_length = _int(block, "block_length")
    buffer = max(block_length, 2)

    def read_ahead(pipeline, iterator):
        return background.PrefetchIterator(pipeline, iterator, buffer, "interleave")

    return transforms.Interleave(dataset, _bind(ctx, node, "f", captured), _cycle_length(cycle), block_length,
                                 numpy_dtypes(output_types), open_element=read_ahead)


@KERNELS.register("MapAndBatchDataset", context=True)
def _map_and_batch(ctx, dataset, *args, node, output_types):
    captured, (batch_size, calls, drop) = _split(args, node)
    mapped = background.ParallelMap(dataset, _bind(ctx, node, "f", captured), _int(calls, "num_parallel_calls"),
                                    numpy_dtypes(output_types))
    return batching.Batch(mapped, _int(batch_size, "batch_size"), bool(scalar(drop, "drop_remainder")))
