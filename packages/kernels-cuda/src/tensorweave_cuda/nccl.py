"""NCCL collectives for tensors on GPUs, run by tensorweave_distributed's collective controller.

The distributed package negotiates every collective over MPI as usual (so all ranks run them in one order)
and asks the tensors' device for a collective backend (``device.collective_backend()``); for a GPU that is
this module's ``NcclCollectives``, which runs the negotiated batch with NCCL on the device's stream, from
device memory to device memory. Its NCCL communicator is built once per MPI communicator: rank 0 makes the
unique id and broadcasts it over MPI. A collective NCCL cannot carry (int16, bfloat16 compression) goes
through host copies and MPI instead, as on a CPU.
"""

import numpy as np

# dtype name -> (the dtype NCCL sees, NCCL's type name); bool travels as uint8, complex as pairs of floats.
WIRE_TYPES = {"float16": ("float16", "FLOAT16"), "float32": ("float32", "FLOAT32"), "float64": ("float64", "FLOAT64"),
              "int8": ("int8", "INT8"), "uint8": ("uint8", "UINT8"), "int32": ("int32", "INT32"),
              "uint32": ("uint32", "UINT32"), "int64": ("int64", "INT64"), "uint64": ("uint64", "UINT64"),
              "bool": ("uint8", "UINT8"), "complex64": ("float32", "FLOAT32"), "complex128": ("float64", "FLOAT64")}
REDUCTIONS = {"sum": "SUM", "mean": "SUM", "max": "MAX", "min": "MIN"}
KINDS = ("allreduce", "allgather", "broadcast", "reduce_scatter")
UNIQUE_ID_BYTES = 128


class WirePlan:
    """How one tensor travels through NCCL: the dtype NCCL sees, NCCL's type and op names, and whether that is
    a view of the tensor's memory (``scale`` wire elements per element) or a converted copy."""

    __slots__ = ("wire", "nccl_type", "reduction", "view", "scale")

    def __init__(self, dtype, wire, nccl_type, reduction, view):
        self.wire, self.nccl_type, self.reduction, self.view = np.dtype(wire), nccl_type, reduction, view
        self.scale = np.dtype(dtype).itemsize // self.wire.itemsize if view else 1


def wire_plan(dtype, kind="allreduce", op="sum", compression="none"):
    """The ``WirePlan`` of a tensor of ``dtype`` in a ``kind`` collective, or None when NCCL cannot carry it.

    Broadcasts and all-gathers move bytes, so every dtype travels. Reductions follow
    tensorweave_distributed.reduction: bool's sum/max are a logical or and its min a logical and (max and min
    of 0/1), complex sums add float pairs, and float16 compression sends wider floats as float16."""
    dtype = np.dtype(dtype)
    if kind in ("broadcast", "allgather"):
        return WirePlan(dtype, "uint8", "UINT8", "SUM", True)
    if dtype.name not in WIRE_TYPES or compression not in ("none", "float16"):
        return None
    if dtype.kind == "c" and op in ("max", "min"):
        return None
    wire, nccl_type = WIRE_TYPES[dtype.name]
    reduction = REDUCTIONS[op]
    if dtype.kind == "b":
        reduction = "MIN" if op == "min" else "MAX"
    if compression == "float16" and dtype.kind == "f" and dtype.itemsize > 2:
        return WirePlan(dtype, "float16", "FLOAT16", reduction, False)
    return WirePlan(dtype, wire, nccl_type, reduction, wire != dtype.name)


def padded_rows(first_dims):
    """The rows every rank sends in an all-gather whose ranks have ``first_dims`` rows (NCCL needs equal counts)."""
    return max(first_dims) if first_dims else 0


def unique_id_to_wire(unique_id):
    """NCCL's unique id as the int8 buffer rank 0 broadcasts: a first byte saying which form CuPy gave (1: bytes, as
    CuPy 14 does; 0: a tuple of signed byte values, as earlier CuPy did), then the id's 128 bytes."""
    as_bytes = isinstance(unique_id, (bytes, bytearray))
    raw = np.frombuffer(bytes(unique_id), np.int8) if as_bytes else np.array(unique_id, np.int64).astype(np.int8)
    if raw.size != UNIQUE_ID_BYTES:
        raise ValueError(f"NCCL's unique id has {raw.size} bytes, expected {UNIQUE_ID_BYTES}")
    return np.concatenate([np.array([int(as_bytes)], np.int8), raw])


def unique_id_from_wire(buffer):
    """The unique id in the form ``NcclCommunicator`` of this CuPy takes, from ``unique_id_to_wire``'s buffer."""
    raw = np.asarray(buffer, np.int8)[1:]
    return raw.tobytes() if buffer[0] else tuple(int(b) for b in raw)


def nccl_module():
    """``cupy.cuda.nccl`` when NCCL's library loads, else None."""
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from cupy.cuda import nccl
    except ImportError:
        return None
    return nccl if getattr(nccl, "available", False) else None


class NcclCollectives:
    """The collective backend of one GPU device: ``supports`` says what it carries; ``run`` is the controller's
    generator for one negotiated batch (yields [] while the GPU works, so the MPI thread keeps polling)."""

    name = "nccl"

    def __init__(self, cupy, cuda_device, stream):
        self.cupy = cupy
        self.cuda_device = cuda_device
        self.stream = stream
        self.nccl = nccl_module()
        self._comms = []  # [(MPI communicator, NCCL communicator)]

    def supports(self, kind, arrays, op="sum", compression="none"):
        """Whether NCCL carries these arrays: device arrays of this GPU (one communicator per device), in dtypes and
        reductions NCCL has."""
        if self.nccl is None or kind not in KINDS:
            return False
        device_id = self.cuda_device.id
        return all(isinstance(a, self.cupy.ndarray) and a.device.id == device_id
                   and wire_plan(a.dtype, kind, op, compression) is not None for a in arrays)

    def to_host(self, array):
        return self.cupy.asnumpy(array, stream=self.stream)

    # ---- the MPI thread ------------------------------------------------------------------------------------
    def run(self, batch, groups, comm):
        nccl_comm = yield from self._communicator(comm)
        size, rank = comm.Get_size(), comm.Get_rank()
        arrays = [a for group in groups for a in group]
        cp, stream = self.cupy, self.stream
        with self.cuda_device, stream:  # every copy and NCCL call in order on the device's stream
            results = []
            self.nccl.groupStart()
            try:
                for index, array in enumerate(arrays):
                    results.append(self._enqueue(batch, index, cp.ascontiguousarray(array), nccl_comm, size, rank))
            finally:
                self.nccl.groupEnd()
            results = [finish() for finish in results]
            done = stream.record()
        while not done.done:
            yield []
        out, start = [], 0
        for group in groups:
            out.append(results[start:start + len(group)])
            start += len(group)
        return out

    def _communicator(self, comm):
        for known, nccl_comm in self._comms:
            if known is comm:
                return nccl_comm
        unique = np.zeros(UNIQUE_ID_BYTES + 1, np.int8)
        if comm.Get_rank() == 0:
            unique[:] = unique_id_to_wire(self.nccl.get_unique_id())
        yield [comm.Ibcast(unique, root=0)]
        with self.cuda_device:
            try:
                nccl_comm = self.nccl.NcclCommunicator(comm.Get_size(), unique_id_from_wire(unique), comm.Get_rank())
            except Exception as e:
                raise RuntimeError(f"NCCL could not join rank {comm.Get_rank()} of {comm.Get_size()} on CUDA device "
                                   f"{self.cuda_device.id}: {e}. Each rank needs its own GPU (set "
                                   f"GPUOptions(visible_device_list=) per rank, e.g. to the local rank)") from e
        self._comms.append((comm, nccl_comm))
        return nccl_comm

    def _enqueue(self, batch, index, array, nccl_comm, size, rank):
        """Queues one tensor's NCCL call; returns ``finish()`` giving its result once queued work is ordered."""
        cp, ptr = self.cupy, self.stream.ptr
        op = batch.op if batch.kind in ("allreduce", "reduce_scatter") else "sum"
        plan = wire_plan(array.dtype, batch.kind, op, batch.compression)
        wire_type, nccl_op = getattr(self.nccl, "NCCL_" + plan.nccl_type), getattr(self.nccl, "NCCL_" + plan.reduction)
        wire = _to_wire(array, plan)
        if batch.kind == "allreduce":
            out = cp.empty_like(wire)
            nccl_comm.allReduce(wire.data.ptr, out.data.ptr, wire.size, wire_type, nccl_op, ptr)
            return lambda: _finish_mean(cp, _from_wire(out, array, plan), batch.op, size)
        if batch.kind == "broadcast":
            out = cp.empty_like(wire)
            nccl_comm.broadcast(wire.data.ptr, out.data.ptr, wire.size, wire_type, batch.root, ptr)
            return lambda: _from_wire(out, array, plan)
        row = int(np.prod(array.shape[1:], dtype=np.int64)) * plan.scale
        if batch.kind == "allgather":
            first_dims = batch.extras[index]
            most = padded_rows(first_dims)
            send = cp.zeros(most * row, wire.dtype)
            send[:wire.size] = wire
            out = cp.empty((size, most * row), wire.dtype)
            nccl_comm.allGather(send.data.ptr, out.data.ptr, most * row, wire_type, ptr)
            rows = sum(first_dims)

            def gathered():
                flat = cp.concatenate([out[r, :first_dims[r] * row] for r in range(size)])
                return _from_wire(flat, array, plan, (rows,) + array.shape[1:])
            return gathered
        bounds = batch.extras[index]  # the MPI path's row blocks, from the negotiation
        most = bounds[1] - bounds[0]
        send = cp.zeros((size, most * row), wire.dtype)
        for r in range(size):
            send[r, :(bounds[r + 1] - bounds[r]) * row] = wire[bounds[r] * row:bounds[r + 1] * row]
        out = cp.empty(most * row, wire.dtype)
        nccl_comm.reduceScatter(send.data.ptr, out.data.ptr, most * row, wire_type, nccl_op, ptr)
        mine = bounds[rank + 1] - bounds[rank]
        shape = (mine,) + array.shape[1:]
        return lambda: _finish_mean(cp, _from_wire(out[:mine * row], array, plan, shape), batch.op, size)


def _to_wire(array, plan):
    """``array`` flattened as NCCL sees it: a view of its memory, or a float16 copy under compression."""
    flat = array.reshape(-1)
    return flat.view(plan.wire) if plan.view else flat.astype(plan.wire, copy=False)


def _from_wire(flat, like, plan, shape=None):
    shape = like.shape if shape is None else shape
    values = flat.view(like.dtype) if plan.view else flat.astype(like.dtype, copy=False)
    return values.reshape(shape)


def _finish_mean(cp, values, op, size):
    """The sum divided by the number of ranks (floor division for integers), as the MPI path does."""
    if op != "mean":
        return values
    if values.dtype.kind in "iu":
        return cp.floor_divide(values, size)
    return (values / size).astype(values.dtype, copy=False)


def backend_for(device):
    """The NCCL backend of a GPU device (made once and kept on the device), or None without NCCL."""
    backend = getattr(device, "_nccl_collectives", None)
    if backend is None:
        if nccl_module() is None:
            return None
        backend = NcclCollectives(device.cupy, device.cuda_device, device.stream)
        device._nccl_collectives = backend
    return backend
