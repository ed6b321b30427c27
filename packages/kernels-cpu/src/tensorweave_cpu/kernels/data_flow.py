"""CPU kernels for queue ops.

A ``*QueueV2`` kernel finds or makes its queue in the device's container: under ``shared_name`` when
given (so sessions on one target share it), else under a name private to the session. Enqueues and
dequeues are asynchronous kernels: a blocked one waits in the queue, not on an executor thread, and
fails with the step's error when the step is cancelled (a deadline, a closed session).
"""

import numpy as np

from tensorweave.extension import KernelSet, errors

from tensorweave_cpu import queues
from tensorweave_cpu.shared_resources import find_or_make

KERNELS = KernelSet("CPU")


def _shapes(attr):
    return [None if s.ndims is None else tuple(d.value for d in s.dims) for s in attr]


def _queue_creator(make):
    def build(node):
        attrs = node.attrs
        dtypes = [d.as_numpy_dtype for d in attrs["component_types"]]
        shapes = _shapes(attrs["shapes"])
        wanted = make("", dtypes, shapes, attrs).signature()

        def create(ctx):
            handle = find_or_make(ctx, node, lambda name: make(name, dtypes, shapes, attrs))
            queue = handle.resource
            if not isinstance(queue, queues.Queue) or queue.signature() != wanted:
                have = queue.signature() if isinstance(queue, queues.Queue) else type(queue).__name__
                raise errors.InvalidArgumentError(None, None, (
                    f"shared queue '{handle.name}' in container '{handle.container}' is {have}, but this op "
                    f"asks for {wanted}; give queues that differ different shared_names"))
            return handle

        return create
    return build


def _make_priority(name, dtypes, shapes, attrs):
    return queues.PriorityQueue(name, [np.int64] + dtypes, [()] + shapes, attrs["capacity"])


def _make_random(name, dtypes, shapes, attrs):
    return queues.RandomShuffleQueue(name, dtypes, shapes, attrs["capacity"], attrs["min_after_dequeue"],
                                     attrs["seed"], attrs["seed2"])


for _op, _make in (("FIFOQueueV2", lambda n, d, s, a: queues.Queue(n, d, s, a["capacity"])),
                   ("PaddingFIFOQueueV2", lambda n, d, s, a: queues.PaddingFIFOQueue(n, d, s, a["capacity"])),
                   ("RandomShuffleQueueV2", _make_random),
                   ("PriorityQueueV2", _make_priority)):
    KERNELS.add(_op, build=_queue_creator(_make), context=True)


def _queue(handle):
    queue = getattr(handle, "resource", None)
    if not isinstance(queue, queues.Queue):
        raise errors.InvalidArgumentError(None, None, f"expected a queue handle, got {handle!r}")
    return queue


@KERNELS.register("QueueEnqueueV2", asynchronous=True)
def _enqueue(ctx, done, handle, *components):
    _queue(handle).enqueue(components, ctx.step.cancellation, done)


@KERNELS.register("QueueEnqueueManyV2", asynchronous=True)
def _enqueue_many(ctx, done, handle, *components):
    _queue(handle).enqueue_many(components, ctx.step.cancellation, done)


@KERNELS.register("QueueDequeueV2", asynchronous=True)
def _dequeue(ctx, done, handle):
    _queue(handle).dequeue(ctx.step.cancellation, done)


@KERNELS.register("QueueDequeueManyV2", asynchronous=True)
def _dequeue_many(ctx, done, handle, n):
    _queue(handle).dequeue_many(int(n), ctx.step.cancellation, done)


@KERNELS.register("QueueDequeueUpToV2", asynchronous=True)
def _dequeue_up_to(ctx, done, handle, n):
    _queue(handle).dequeue_many(int(n), ctx.step.cancellation, done, up_to=True)


@KERNELS.register("QueueCloseV2")
def _close(handle, *, cancel_pending_enqueues):
    _queue(handle).close_queue(cancel_pending_enqueues)


@KERNELS.register("QueueIsClosedV2")
def _is_closed(handle):
    return np.bool_(_queue(handle).is_closed())


@KERNELS.register("QueueSizeV2")
def _size(handle):
    return np.int32(_queue(handle).size())
