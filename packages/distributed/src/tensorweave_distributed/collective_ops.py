"""Collective ops in the graph: definitions, shape functions, gradients and Horovod-style wrappers.

Each op takes a list of tensors (so one op can carry every gradient of a model and travel fused) and
gives one output per input. Ranks match a collective by its name: the op's name (identical on every rank
when every rank builds the same graph), or ``name=`` given to the wrapper, plus the loop frame and
iteration inside ``tf.while_loop``. The ops are stateful, so no pass merges or folds them.
"""

from tensorweave import IndexedSlices, convert_to_tensor, dtypes
from tensorweave.extension import OpDefList, TensorShape, apply_op

from tensorweave_distributed.reduction import Compression, check_op, compression_name
from tensorweave_distributed.settings import ALGORITHMS
from tensorweave_distributed.world import get_world

__all__ = ["Average", "Sum", "Max", "Min", "allreduce", "grouped_allreduce", "allgather", "grouped_allgather",
           "broadcast", "grouped_broadcast", "reducescatter", "all_reduce", "all_gather", "reduce_scatter"]

Sum, Average, Max, Min = "sum", "mean", "max", "min"

DEFS = OpDefList()
_COMMON = ["T: list(any) >= 1", "collective_name: string = ''"]
_ALGORITHM = "algorithm: {" + ", ".join(repr(a) for a in ("",) + ALGORITHMS) + "} = ''"
_COMPRESSION = "compression: {'none', 'float16', 'bfloat16'} = 'none'"
_REDUCTION = "reduction: {'sum', 'mean', 'max', 'min'} = 'mean'"

ALL_REDUCE = DEFS.define(
    "MpiAllReduce", inputs=["tensors: T"], outputs=["reduced: T"],
    attrs=_COMMON + [_REDUCTION, _ALGORITHM, _COMPRESSION],
    is_stateful=True, doc="Each tensor reduced elementwise over every rank (sum, mean, max or min).")
ALL_GATHER = DEFS.define(
    "MpiAllGather", inputs=["tensors: T"], outputs=["gathered: T"], attrs=list(_COMMON), is_stateful=True,
    doc="Each tensor concatenated along dimension 0 over the ranks, in rank order (first dimensions may differ).")
BROADCAST = DEFS.define(
    "MpiBroadcast", inputs=["tensors: T"], outputs=["broadcast: T"], attrs=_COMMON + ["root_rank: int = 0"],
    is_stateful=True, doc="Each tensor as it is on root_rank.")
REDUCE_SCATTER = DEFS.define(
    "MpiReduceScatter", inputs=["tensors: T"], outputs=["scattered: T"], attrs=_COMMON + [_REDUCTION, _COMPRESSION],
    is_stateful=True, doc="Each tensor reduced over the ranks; rank r keeps the r-th of size() near-equal row blocks.")


@ALL_REDUCE.set_shape_fn
def _same_shapes(op):
    return [t.shape for t in op.inputs]


BROADCAST.set_shape_fn(_same_shapes)


@ALL_GATHER.set_shape_fn
def _gathered_shapes(op):
    shapes = []
    for t in op.inputs:
        if t.shape.ndims is None:
            shapes.append(TensorShape(None))
        else:
            shapes.append(TensorShape([None]).concatenate(t.shape.with_rank_at_least(1)[1:]))
    return shapes


@REDUCE_SCATTER.set_shape_fn
def _scattered_shapes(op):
    world = get_world(required=False)
    shapes = []
    for t in op.inputs:
        shape = t.shape
        if shape.ndims is None:
            shapes.append(TensorShape(None))
            continue
        rows = shape.with_rank_at_least(1).as_list()[0]
        if rows is not None and world is not None:
            base, extra = divmod(rows, world.size)
            rows = base + (1 if world.rank < extra else 0)
        else:
            rows = None
        shapes.append(TensorShape([rows]).concatenate(shape[1:]))
    return shapes


@ALL_REDUCE.set_gradient
def _all_reduce_grad(op, *grads):
    reduction = op.get_attr("reduction")
    if reduction not in (Sum, Average):
        return [None] * len(grads)
    present = [i for i, g in enumerate(grads) if g is not None]
    out = [None] * len(grads)
    if present:
        reduced = grouped_allreduce([grads[i] for i in present], op=reduction, name=f"{op.name}_grad",
                                    compression=op.get_attr("compression"))
        for i, r in zip(present, reduced):
            out[i] = r
    return out


@ALL_GATHER.set_gradient
def _all_gather_grad(op, *grads):
    import tensorweave as tf
    world = get_world()
    out = []
    for i, (x, grad) in enumerate(zip(op.inputs, grads)):
        if grad is None:
            out.append(None)
            continue
        summed = grouped_allreduce([grad], op=Sum, name=f"{op.name}_grad_{i}")[0]
        rows = tf.shape(x, out_type=dtypes.int32)[:1]
        all_rows = allgather(rows, name=f"{op.name}_grad_rows_{i}")
        offset = tf.reduce_sum(all_rows[:world.rank])  # computed on rank 0 too: every rank must run each collective
        out.append(summed[offset:offset + rows[0]])
    return out


@BROADCAST.set_gradient
def _broadcast_grad(op, *grads):
    import tensorweave as tf
    root = op.get_attr("root_rank")
    present = [i for i, g in enumerate(grads) if g is not None]
    out = [None] * len(grads)
    if present:
        reduced = grouped_allreduce([grads[i] for i in present], op=Sum, name=f"{op.name}_grad")
        for i, r in zip(present, reduced):
            out[i] = r if get_world().rank == root else r * tf.constant(0, r.dtype)  # keeps the collective needed
    return out


@REDUCE_SCATTER.set_gradient
def _reduce_scatter_grad(op, *grads):
    reduction = op.get_attr("reduction")
    if reduction not in (Sum, Average):
        return [None] * len(grads)
    out = []
    for i, grad in enumerate(grads):
        if grad is None:
            out.append(None)
            continue
        gathered = allgather(grad, name=f"{op.name}_grad_{i}")
        out.append(gathered / get_world().size if reduction == Average else gathered)
    return out


# ---- wrappers ----------------------------------------------------------------------------------------
def _op_name(op, average):
    if average is not None:
        if op is not None:
            raise ValueError("give either op= or the older average=, not both")
        return Average if average else Sum
    op = Average if op is None else getattr(op, "name", op)
    return {"average": Average, "avg": Average, "mean": Average, "sum": Sum, "max": Max, "min": Min}.get(
        str(op).lower(), op)


def _algorithm(algorithm):
    algorithm = algorithm or ""
    if algorithm and algorithm not in ALGORITHMS:
        raise ValueError(f"unknown all-reduce algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    return algorithm


def grouped_allreduce(tensors, op=Average, compression=Compression.none, name=None, algorithm=None):
    """All-reduces every tensor of ``tensors`` in one op (one negotiation, fused travel); returns a list."""
    op = _op_name(op, None)
    tensors = [convert_to_tensor(t) for t in tensors]
    for t in tensors:
        try:
            check_op(op, t.dtype.as_numpy_dtype)
        except (ValueError, TypeError) as e:
            raise ValueError(f"allreduce of {t.name}: {e}") from None
    result = apply_op("MpiAllReduce", [tensors], {
        "reduction": op, "algorithm": _algorithm(algorithm), "compression": compression_name(compression),
        "collective_name": ""}, name=name or "MpiAllReduce")
    return list(result)


def allreduce(tensor, average=None, device_dense="", device_sparse="", compression=Compression.none, op=None,
              name=None, algorithm=None):
    """Horovod's ``allreduce``: ``op`` (default Average) of ``tensor`` over every rank. An IndexedSlices
    (a sparse gradient) travels by all-gather of its values and indices instead (sum or average only)."""
    import tensorweave as tf
    op = _op_name(op, average)
    if isinstance(tensor, IndexedSlices):
        if op not in (Sum, Average):
            raise ValueError(f"allreduce of IndexedSlices supports sum and average, not {op}")
        with tf.device(device_sparse):
            values, indices = grouped_allgather([tensor.values, tensor.indices], name=name or "MpiAllGatherSlices")
            if op == Average:
                values = values / tf.cast(get_world().size, values.dtype)
        return IndexedSlices(values, indices, tensor.dense_shape)
    with tf.device(device_dense):
        return grouped_allreduce([tensor], op, compression, name or "MpiAllReduce", algorithm)[0]


def grouped_allgather(tensors, name=None):
    tensors = [convert_to_tensor(t) for t in tensors]
    for t in tensors:
        if t.shape.ndims == 0:
            raise ValueError(f"allgather needs tensors of rank >= 1 (they are concatenated along dimension 0); "
                             f"{t.name} is a scalar: reshape it to [1]")
    return list(apply_op("MpiAllGather", [tensors], {"collective_name": ""}, name=name or "MpiAllGather"))


def allgather(tensor, name=None):
    """Every rank's ``tensor`` concatenated along dimension 0, in rank order; first dimensions may differ."""
    return grouped_allgather([tensor], name)[0]


def grouped_broadcast(tensors, root_rank, name=None):
    tensors = [convert_to_tensor(t) for t in tensors]
    return list(apply_op("MpiBroadcast", [tensors], {"root_rank": int(root_rank), "collective_name": ""},
                         name=name or "MpiBroadcast"))


def broadcast(tensor, root_rank, name=None):
    """``tensor`` as it is on ``root_rank``, on every rank."""
    return grouped_broadcast([tensor], root_rank, name)[0]


def reducescatter(tensor, op=Average, name=None, compression=Compression.none):
    """``op`` of ``tensor`` over the ranks, split along dimension 0 into size() near-equal blocks (the
    first ``rows % size`` ranks get one row more); rank r gets block r."""
    op = _op_name(op, None)
    tensor = convert_to_tensor(tensor)
    check_op(op, tensor.dtype.as_numpy_dtype)
    if tensor.shape.ndims == 0:
        raise ValueError(f"reducescatter needs a tensor of rank >= 1; {tensor.name} is a scalar")
    return apply_op("MpiReduceScatter", [[tensor]], {"reduction": op, "compression": compression_name(compression),
                                                      "collective_name": ""}, name=name or "MpiReduceScatter")[0]


all_reduce, all_gather, reduce_scatter = allreduce, allgather, reducescatter
