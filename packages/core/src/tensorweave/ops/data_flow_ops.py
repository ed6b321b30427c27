"""Queues: FIFO, padding FIFO, random shuffle and priority queues (TF1's ``tf.FIFOQueue`` and friends).

A queue is a resource in a container of its device, made by a ``*QueueV2`` op whose output is the
handle; the other queue ops take that handle. Steps running at the same time share the queue, which is
how input pipelines feed training: a full queue blocks enqueuers (back pressure), an empty one blocks
dequeuers, and a closed, drained queue raises OutOfRangeError.
"""

import zlib

from tensorweave import dtypes as dtypes_mod
from tensorweave.framework import common_shapes, graph as graph_mod, random_seed, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value

DEFS = OpDefList()

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"]

_QUEUE_ATTRS = ["component_types: list(type) >= 1", "shapes: list(shape) >= 0 = []", "capacity: int = -1",
                "container: string = ''", "shared_name: string = ''"]


def _define_queue(name, extra_attrs=(), attrs=_QUEUE_ATTRS, doc=""):
    return DEFS.define(name, outputs=["handle: resource"], attrs=list(attrs) + list(extra_attrs), is_stateful=True,
                       grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape, doc=doc)


_define_queue("FIFOQueueV2", doc="A queue that hands out elements in the order they were enqueued.")
_define_queue("PaddingFIFOQueueV2", doc="A FIFO queue whose dequeue_many pads components to the batch's largest shape.")
_define_queue("RandomShuffleQueueV2", ["min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"],
              doc="A queue that hands out a uniformly random element, keeping min_after_dequeue behind.")
_define_queue("PriorityQueueV2", attrs=["component_types: list(type) >= 0 = []", "shapes: list(shape) >= 0",
                                        "capacity: int = -1", "container: string = ''", "shared_name: string = ''"],
              doc="A queue of (int64 priority, components...) handing out the lowest priority first.")

_ENQUEUE = {"inputs": ["handle: resource", "components: Tcomponents"], "attrs": ["Tcomponents: list(type) >= 1"],
            "is_stateful": True, "grad": NOT_DIFFERENTIABLE}
DEFS.define("QueueEnqueueV2", **_ENQUEUE, doc="Adds one element; blocks while the queue is full.")
DEFS.define("QueueEnqueueManyV2", **_ENQUEUE,
            doc="Adds the slices along dimension 0 of every component; blocks while the queue is full.")
DEQUEUE = DEFS.define("QueueDequeueV2", inputs=["handle: resource"], outputs=["components: component_types"],
                      attrs=["component_types: list(type) >= 1"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
                      doc="Removes one element; blocks while the queue is empty.")
DEQUEUE_MANY = DEFS.define("QueueDequeueManyV2", inputs=["handle: resource", "n: int32"],
                           outputs=["components: component_types"], attrs=["component_types: list(type) >= 1"],
                           is_stateful=True, grad=NOT_DIFFERENTIABLE,
                           doc="Removes n elements, stacked along a new dimension 0.")
DEQUEUE_UP_TO = DEFS.define("QueueDequeueUpToV2", inputs=["handle: resource", "n: int32"],
                            outputs=["components: component_types"], attrs=["component_types: list(type) >= 1"],
                            is_stateful=True, grad=NOT_DIFFERENTIABLE,
                            doc="As QueueDequeueManyV2, but a closed queue hands out its last, smaller batch.")
DEFS.define("QueueCloseV2", inputs=["handle: resource"], attrs=["cancel_pending_enqueues: bool = False"],
            is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Refuses further enqueues; pending ones still complete unless cancel_pending_enqueues.")
DEFS.define("QueueIsClosedV2", inputs=["handle: resource"], outputs=["is_closed: bool"], is_stateful=True,
            grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape, doc="Whether the queue is closed.")
DEFS.define("QueueSizeV2", inputs=["handle: resource"], outputs=["size: int32"], is_stateful=True,
            grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape, doc="The number of elements in the queue.")


def _queue_element_shapes(op):
    """The element shapes of the queue behind ``op``'s handle input, when its creating op is visible."""
    creator = op.inputs[0].op
    n = len(op.outputs)
    if not creator.type.endswith("QueueV2"):
        return [tensor_shape.TensorShape(None)] * n
    shapes = creator.get_attr("shapes")
    if creator.type == "PriorityQueueV2" and shapes:
        shapes = [tensor_shape.TensorShape([])] + list(shapes)
    return list(shapes) if len(shapes) == n else [tensor_shape.TensorShape(None)] * n


@DEQUEUE.set_shape_fn
def _dequeue_shape(op):
    return _queue_element_shapes(op)


def _batch_shapes(op, known_n):
    n = constant_value(op.inputs[1]) if known_n else None
    batch = tensor_shape.TensorShape([None if n is None else int(n)])
    return [batch.concatenate(s) for s in _queue_element_shapes(op)]


DEQUEUE_MANY.set_shape_fn(lambda op: _batch_shapes(op, True))
DEQUEUE_UP_TO.set_shape_fn(lambda op: _batch_shapes(op, False))


# ---- the Python queue classes (TF1's API) -----------------------------------------------------------
def _as_type_list(dtypes):
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    return [dtypes_mod.as_dtype(d) for d in dtypes]


def _as_shape_list(shapes, unknown_dim_allowed=False):
    if shapes is None:
        return None
    if isinstance(shapes, tensor_shape.TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (tuple, list)):
        raise TypeError(f"shapes must be a TensorShape or a list or tuple of shapes, got {shapes!r}")
    if not unknown_dim_allowed and all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # one shape given as a list of ints
    shapes = [tensor_shape.as_shape(s) for s in shapes]
    if any(s.ndims is None for s in shapes):
        raise ValueError(f"all queue shapes must have a known rank: {shapes}")
    if not unknown_dim_allowed and not all(s.is_fully_defined() for s in shapes):
        raise ValueError(f"all shapes must be fully defined: {shapes}; only PaddingFIFOQueue takes None dimensions")
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError(f"a queue with {len(dtypes)} components needs {len(dtypes)} names, got {list(names)}")
    return list(names)


def _current_container():
    return graph_mod.get_default_graph().current_container


class QueueBase:
    """A queue of tuples of tensors; subclasses create it. TF1's ``tf.QueueBase``."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = list(dtypes)
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError(f"a queue with {len(dtypes)} component types needs as many shapes, got {shapes}")
            self._shapes = list(shapes)
        else:
            self._shapes = [tensor_shape.unknown_shape() for _ in dtypes]
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        return self._dtypes

    @property
    def shapes(self):
        return self._shapes

    @property
    def names(self):
        return self._names

    def _check_enqueue_dtypes(self, vals):
        if self._names is not None:
            if not isinstance(vals, dict):
                raise TypeError(f"queue {self.name!r} has named components {self._names}: enqueue a dict")
            if sorted(vals) != sorted(self._names):
                raise ValueError(f"keys in the dictionary to enqueue ({sorted(vals)}) do not match the names "
                                 f"of queue {self.name!r} ({sorted(self._names)})")
            vals = [vals[k] for k in self._names]
        elif isinstance(vals, dict):
            raise TypeError(f"queue {self.name!r} has no component names; enqueue a tuple, not a dict")
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"queue {self.name!r} has {len(self._dtypes)} components, but {len(vals)} values were given")
        tensors = []
        for i, (val, dtype) in enumerate(zip(vals, self._dtypes)):
            try:
                tensors.append(convert_to_tensor(val, dtype=dtype, name=f"component_{i}"))
            except (TypeError, ValueError) as e:
                raise TypeError(f"component {i} enqueued to queue {self.name!r} must be {dtype.name}: {e}") from None
        return tensors

    def _dequeue_return_value(self, tensors):
        if self._names is not None:
            return dict(zip(self._names, tensors))
        return tensors[0] if len(tensors) == 1 else tensors

    def enqueue(self, vals, name=None):
        """Adds one element; when the queue is full, the step waits until there is room."""
        tensors = self._check_enqueue_dtypes(vals)
        for i, (t, shape) in enumerate(zip(tensors, self._shapes)):
            if not t.shape.is_compatible_with(shape):
                raise ValueError(f"component {i} enqueued to queue {self.name!r} has shape {t.shape}, "
                                 f"but the queue holds shape {shape}")
        return apply_op("QueueEnqueueV2", [self._queue_ref, tensors], name=name or f"{self._name}_enqueue")

    def enqueue_many(self, vals, name=None):
        """Adds every slice along dimension 0 of ``vals`` (all components share that dimension)."""
        tensors = self._check_enqueue_dtypes(vals)
        batch = tensor_shape.Dimension(None)
        for i, (t, shape) in enumerate(zip(tensors, self._shapes)):
            if t.shape.ndims == 0:
                raise ValueError(f"enqueue_many to queue {self.name!r}: component {i} is a scalar; it needs a "
                                 f"batch dimension 0 (use enqueue for one element)")
            if t.shape.ndims is not None:
                if not t.shape[1:].is_compatible_with(shape):
                    raise ValueError(f"enqueue_many to queue {self.name!r}: component {i} has shape {t.shape}, "
                                     f"whose elements {t.shape[1:]} do not match the queue's shape {shape}")
                if not batch.is_compatible_with(t.shape[0]):
                    raise ValueError(f"enqueue_many to queue {self.name!r}: components have different batch "
                                     f"sizes ({batch} and {t.shape[0]} in component {i})")
                batch = batch.merge_with(t.shape[0])
        return apply_op("QueueEnqueueManyV2", [self._queue_ref, tensors],
                        name=name or f"{self._name}_EnqueueMany")

    def dequeue(self, name=None):
        """Removes one element; when the queue is empty the step waits; closed and empty: OutOfRangeError."""
        out = apply_op("QueueDequeueV2", [self._queue_ref], {"component_types": self._dtypes},
                       name=name or f"{self._name}_Dequeue")
        for t, shape in zip(out, self._shapes):
            t.set_shape(shape)
        return self._dequeue_return_value(out)

    def dequeue_many(self, n, name=None):
        """Removes ``n`` elements, each component stacked along a new dimension 0."""
        return self._dequeue_batch("QueueDequeueManyV2", n, name or f"{self._name}_DequeueMany")

    def dequeue_up_to(self, n, name=None):
        """As dequeue_many, but once the queue is closed it returns the remaining 1..n elements."""
        return self._dequeue_batch("QueueDequeueUpToV2", n, name or f"{self._name}_DequeueUpTo")

    def _dequeue_batch(self, op_type, n, name):
        n = convert_to_tensor(n, dtype=dtypes_mod.int32, name="n")
        out = apply_op(op_type, [self._queue_ref, n], {"component_types": self._dtypes}, name=name)
        n_value = constant_value(n) if op_type == "QueueDequeueManyV2" else None
        batch = tensor_shape.TensorShape([None if n_value is None else int(n_value)])
        for t, shape in zip(out, self._shapes):
            t.set_shape(batch.concatenate(shape))
        return self._dequeue_return_value(out)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Refuses later enqueues; dequeues drain what is left, then raise OutOfRangeError.

        With ``cancel_pending_enqueues`` the enqueues waiting for room fail with CancelledError.
        """
        return apply_op("QueueCloseV2", [self._queue_ref], {"cancel_pending_enqueues": cancel_pending_enqueues},
                        name=name or f"{self._name}_Close")

    def is_closed(self, name=None):
        return apply_op("QueueIsClosedV2", [self._queue_ref], name=name or f"{self._name}_IsClosed")

    def size(self, name=None):
        return apply_op("QueueSizeV2", [self._queue_ref], name=name or f"{self._name}_Size")


def _create(op_type, dtypes, shapes, capacity, shared_name, name, **attrs):
    attrs.update(component_types=dtypes, shapes=shapes or [], capacity=capacity,
                 container=_current_container(), shared_name=shared_name or "")
    return apply_op(op_type, [], attrs, name=name)


class FIFOQueue(QueueBase):
    """Elements come out in the order they went in. ``shapes`` (fully defined) let dequeue_many stack."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        ref = _create("FIFOQueueV2", dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, _as_name_list(names, dtypes), ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose shapes may have None dimensions; dequeue_many pads each batch with zeros."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        if not isinstance(shapes, (list, tuple)) or not shapes or any(s is None or isinstance(s, int) for s in shapes):
            raise ValueError(f"PaddingFIFOQueue needs one shape per component (a list of shapes), got {shapes!r}")
        shapes = _as_shape_list(shapes, unknown_dim_allowed=True)
        if len(shapes) != len(dtypes):
            raise ValueError(f"PaddingFIFOQueue has {len(dtypes)} component types but {len(shapes)} shapes")
        ref = _create("PaddingFIFOQueueV2", dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, _as_name_list(names, dtypes), ref)


class RandomShuffleQueue(QueueBase):
    """Dequeues a uniformly random element, keeping at least ``min_after_dequeue`` until closed."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        if capacity >= 0 and min_after_dequeue >= capacity:
            raise ValueError(f"RandomShuffleQueue: min_after_dequeue ({min_after_dequeue}) must be less than "
                             f"capacity ({capacity}), or dequeues could never proceed")
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        seed1, seed2 = _queue_seeds(seed, shared_name)
        ref = _create("RandomShuffleQueueV2", dtypes, shapes, capacity, shared_name, name,
                      min_after_dequeue=int(min_after_dequeue), seed=seed1, seed2=seed2)
        super().__init__(dtypes, shapes, _as_name_list(names, dtypes), ref)


def _queue_seeds(seed, shared_name):
    seed1, seed2 = random_seed.get_seed(seed)
    if seed1 is None and seed2 is None:
        return 0, 0
    if seed is None and shared_name:
        seed2 = zlib.crc32(shared_name.encode()) & 0x7FFFFFFF  # sharing queues agree on their seed
    return int(seed1 or 0), int(seed2 or 0)


class PriorityQueue(QueueBase):
    """Elements are (int64 priority, components...); the lowest priority comes out first."""

    def __init__(self, capacity, types, shapes, names=None, shared_name=None, name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes)
        if shapes is None or len(shapes) != len(types):
            raise ValueError(f"PriorityQueue needs one fully defined shape per component type, got {shapes!r}")
        ref = _create("PriorityQueueV2", types, shapes, capacity, shared_name, name)
        dtypes = [dtypes_mod.int64] + types
        super().__init__(dtypes, [tensor_shape.TensorShape([])] + shapes, _as_name_list(names, dtypes), ref)
