"""``tf.data.experimental``: TF 1.15's fused and helper transformations, each used with ``dataset.apply(...)``."""

from tensorweave import dtypes
from tensorweave.data.dataset_op import int64_scalar
from tensorweave.data.dataset_ops import AUTOTUNE, batched_structure, make_dataset
from tensorweave.data.structured_function import StructuredFunction
from tensorweave.framework import random_seed
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["AUTOTUNE", "map_and_batch", "parallel_interleave", "prefetch_to_device", "shuffle_and_repeat", "unbatch"]


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False, num_parallel_calls=None):
    """``map(map_func)`` then ``batch(batch_size)`` in one transformation, the map calls running on
    ``num_parallel_calls`` background threads (default: ``num_parallel_batches * batch_size``, else
    ``batch_size``), the results in input order."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("map_and_batch: give num_parallel_batches or num_parallel_calls, not both")

    def apply(dataset):
        fn = StructuredFunction(map_func, dataset._structure, "map_and_batch", "map_and_batch_fn")
        size = int64_scalar(batch_size, "batch_size")
        if num_parallel_calls is not None:
            calls = int64_scalar(num_parallel_calls, "num_parallel_calls")
        elif num_parallel_batches is not None:
            calls = int64_scalar(num_parallel_batches, "num_parallel_batches") * size
        else:
            calls = size
        drop = convert_to_tensor(drop_remainder, dtype=dtypes.bool, name="drop_remainder")
        return make_dataset("MapAndBatchDataset", [dataset._variant_tensor, fn.captured, size, calls, drop],
                            batched_structure(fn.output_structure, size, drop), {"f": fn.function})
    return apply


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``: each epoch a new order, no buffer spanning two."""
    def apply(dataset):
        seed1, seed2 = random_seed.get_seed(seed)
        inputs = [dataset._variant_tensor, int64_scalar(buffer_size, "buffer_size"), int64_scalar(seed1 or 0, "seed"),
                  int64_scalar(seed2 or 0, "seed2"), int64_scalar(-1 if count is None else count, "count")]
        return make_dataset("ShuffleAndRepeatDataset", inputs, dataset._structure)
    return apply


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
                        prefetch_input_elements=None):
    """``interleave`` reading its ``cycle_length`` open datasets ahead on background threads; ``sloppy``
    allows another order, which this implementation never uses (its order is always interleave's)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length, num_parallel_calls=cycle_length)


def unbatch():
    """The slices of each element along its first dimension."""
    return lambda dataset: dataset.unbatch()


def prefetch_to_device(device, buffer_size=None):
    """Prefetching on the host: a consumer on ``device`` gets each element copied there by the partitioner."""
    return lambda dataset: dataset.prefetch(AUTOTUNE if buffer_size is None else buffer_size)
