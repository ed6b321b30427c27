"""Input pipelines on queues (TF1's tf.train input functions).

Producers (``input_producer`` and its string, range and slice forms) fill a queue with the elements
of a tensor, epoch after epoch, shuffled if asked; ``batch`` and friends gather single examples into
batches through another queue. Each adds a QueueRunner to the graph, so
``tf.train.start_queue_runners`` (or a MonitoredSession) keeps the queues full while training
dequeues. With ``num_epochs`` the input ends with OutOfRangeError once every epoch went through.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, nest, tensor_shape
from tensorweave.framework.registry import get_registries
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_ops, data_flow_ops, gather_ops, math_ops, random_ops, range_ops, shape_ops, unary_math_ops, variables,
)
from tensorweave.train import queue_runner

__all__ = ["batch", "batch_join", "input_producer", "limit_epochs", "range_input_producer", "shuffle_batch",
           "shuffle_batch_join", "slice_input_producer", "string_input_producer"]


def limit_epochs(tensor, num_epochs=None, name=None):
    """``tensor``, raising OutOfRangeError after it was produced ``num_epochs`` times (a local counter)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0, not {num_epochs}")
    with graph_mod.name_scope(name or "limit_epochs"):
        epochs = variables.Variable(0, dtype=dtypes.int64, name="epochs", trainable=False,
                                    collections=[graph_mod.GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with graph_mod.control_dependencies([counter]):
            return array_ops.identity(tensor, name="epoch_limited")


def _fill_fraction_summary(queue, name, capacity, min_after_dequeue=0):
    """TF1's automatic fill-level summary of a pipeline queue, when the summary plugin is installed."""
    summary = get_registries().api.get("summary")
    if summary is None or not hasattr(summary, "scalar"):
        return
    size = unary_math_ops.cast(queue.size(), dtypes.float32)
    if min_after_dequeue:
        size = math_ops.maximum(size - float(min_after_dequeue), 0.0)
    summary.scalar(name, size * (1.0 / (capacity - min_after_dequeue)))


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFO queue fed with the rows of ``input_tensor``, ``num_epochs`` times (forever if None)."""
    with graph_mod.name_scope(name or "input_producer"):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(tensor_shape.as_shape(element_shape)) \
            if input_tensor.shape.ndims is not None else tensor_shape.as_shape(element_shape)
        if not element_shape.is_fully_defined():
            raise ValueError("either input_tensor must have a fully defined shape or element_shape must be given")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = data_flow_ops.FIFOQueue(capacity, [input_tensor.dtype], shapes=[element_shape],
                                        shared_name=shared_name, name="fifo_queue")
        enqueue = queue.enqueue_many([input_tensor])
        queue_runner.add_queue_runner(queue_runner.QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _fill_fraction_summary(queue, summary_name, capacity)
        return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                          name=None, cancel_op=None):
    """A queue of strings (usually file names) for readers, ``num_epochs`` times, shuffled per epoch."""
    string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
    static = constant_value(string_tensor)
    if static is not None and static.size == 0:
        raise ValueError("string_input_producer needs a non-empty string_tensor (no file names were given?)")
    return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                          f"fraction_of_{capacity}_full", name or "input_producer", cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1, ``num_epochs`` times, shuffled per epoch."""
    with graph_mod.name_scope(name or "input_producer"):
        indices = range_ops.range(limit)
        return input_producer(indices, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", "range_producer")


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """One row (slice along dimension 0) of every tensor in ``tensor_list`` per dequeue, rows kept together."""
    tensor_list = [convert_to_tensor(t) for t in tensor_list]
    if not tensor_list:
        raise ValueError("slice_input_producer needs at least one tensor")
    with graph_mod.name_scope(name or "input_producer"):
        rows = tensor_list[0].shape[0].value if tensor_list[0].shape.ndims else None
        for t in tensor_list[1:]:
            other = t.shape[0].value if t.shape.ndims else None
            if rows is not None and other is not None and rows != other:
                raise ValueError(f"slice_input_producer: the tensors have different numbers of rows ({rows} and "
                                 f"{other} in {t.name})")
        if rows is None:
            rows = shape_ops.shape(tensor_list[0], out_type=dtypes.int32)[0]
        index_queue = range_input_producer(rows, num_epochs, shuffle, seed, capacity, shared_name)
        index = index_queue.dequeue()
        return [gather_ops.gather(t, index) for t in tensor_list]


# ---- batching -------------------------------------------------------------------------------------------
def _flat_tensors(tensors):
    flat = nest.flatten(tensors)
    if not flat:
        raise ValueError("expected at least one tensor to batch")
    return [convert_to_tensor(t) for t in flat]


def _queue_shapes(tensor_lists, shapes, enqueue_many, dynamic_pad):
    if shapes is not None:
        return [tensor_shape.as_shape(s) for s in shapes]
    merged = None
    for tensors in tensor_lists:
        these = []
        for t in tensors:
            shape = t.shape
            if enqueue_many:
                if shape.ndims == 0:
                    raise ValueError(f"enqueue_many=True needs a batch dimension, but {t.name} is a scalar")
                shape = shape[1:] if shape.ndims is not None else tensor_shape.unknown_shape()
            these.append(shape)
        merged = these if merged is None else [a.merge_with(b) for a, b in zip(merged, these)]
    for t, shape in zip(tensor_lists[0], merged):
        if shape.ndims is None or (not dynamic_pad and not shape.is_fully_defined()):
            raise ValueError(f"the shape of {t.name} ({shape}) must be fully defined to batch it; pass shapes= or "
                             f"use dynamic_pad=True for dimensions that vary")
    return merged


def _batch_through(queue, tensor_lists, batch_size, enqueue_many, allow_smaller_final_batch, name, structure):
    enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
    queue_runner.add_queue_runner(queue_runner.QueueRunner(queue, [enqueue(list(tl)) for tl in tensor_lists]))
    take = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
    dequeued = take(batch_size, name=name)
    dequeued = [dequeued] if not isinstance(dequeued, list) else dequeued
    return nest.pack_sequence_as(structure, dequeued)


def _batch(tensor_lists, structure, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
           allow_smaller_final_batch, shared_name, name, min_after_dequeue=None, seed=None):
    types = [t.dtype for t in tensor_lists[0]]
    for tl in tensor_lists[1:]:
        if [t.dtype for t in tl] != types:
            raise TypeError(f"the tensor lists to batch together have different types: {types} and "
                            f"{[t.dtype for t in tl]}")
    shapes = _queue_shapes(tensor_lists, shapes, enqueue_many, dynamic_pad)
    if min_after_dequeue is None:
        queue_class = data_flow_ops.PaddingFIFOQueue if dynamic_pad else data_flow_ops.FIFOQueue
        queue = queue_class(capacity, types, shapes, shared_name=shared_name)
        _fill_fraction_summary(queue, f"fraction_of_{capacity}_full", capacity)
    else:
        queue = data_flow_ops.RandomShuffleQueue(capacity, min_after_dequeue, types, shapes, seed=seed,
                                                 shared_name=shared_name)
        _fill_fraction_summary(queue, f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full",
                               capacity, min_after_dequeue)
    return _batch_through(queue, tensor_lists, batch_size, enqueue_many, allow_smaller_final_batch, name, structure)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of ``batch_size`` examples of ``tensors`` (any nested structure), in order, via a FIFO queue
    filled by ``num_threads`` threads. ``dynamic_pad`` pads dimensions that vary between examples."""
    flat = _flat_tensors(tensors)
    with graph_mod.name_scope(name or "batch"):
        return _batch([flat] * num_threads, tensors, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                      allow_smaller_final_batch, shared_name, None)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """As ``batch``, with one enqueuing thread per structure in ``tensors_list`` (e.g. one per reader)."""
    flats = [_flat_tensors(t) for t in tensors_list]
    with graph_mod.name_scope(name or "batch_join"):
        return _batch(flats, tensors_list[0], batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                      allow_smaller_final_batch, shared_name, None)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of examples drawn at random from a RandomShuffleQueue that keeps ``min_after_dequeue``."""
    flat = _flat_tensors(tensors)
    with graph_mod.name_scope(name or "shuffle_batch"):
        return _batch([flat] * num_threads, tensors, batch_size, capacity, enqueue_many, shapes, False,
                      allow_smaller_final_batch, shared_name, None, min_after_dequeue, seed)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """As ``shuffle_batch``, with one enqueuing thread per structure in ``tensors_list``."""
    flats = [_flat_tensors(t) for t in tensors_list]
    with graph_mod.name_scope(name or "shuffle_batch_join"):
        return _batch(flats, tensors_list[0], batch_size, capacity, enqueue_many, shapes, False,
                      allow_smaller_final_batch, shared_name, None, min_after_dequeue, seed)
