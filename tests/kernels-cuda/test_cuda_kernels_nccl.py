"""How collectives pick NCCL: the distributed package asks the tensors' device for a collective backend, the
coordinator runs a batch on it only when every rank asked for the same one (else MPI on host copies), and
batches never fuse across backends. A stand-in backend (numpy behind a device-array wrapper, reduced over MPI)
checks the routing in a real 2-rank job here; the NCCL tests themselves need GPUs and skip without them."""

import os
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install tensorweave[distributed]")

from tensorweave_distributed import negotiation  # noqa: E402
from tensorweave_distributed.collective_kernels import device_backend  # noqa: E402
from tensorweave_distributed.controller import Request  # noqa: E402
from tensorweave_distributed.settings import Settings  # noqa: E402

from conftest import CUDA  # noqa: E402

MPIEXEC = Path(sys.executable).parent / "mpiexec"
if not MPIEXEC.exists() and shutil.which("mpiexec"):  # an interpreter whose MPI lives elsewhere on the PATH
    MPIEXEC = Path(shutil.which("mpiexec"))


def _needs_mpiexec():
    if not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable} or on the PATH: pip install tensorweave[distributed] "
                    f"(the mpich wheel)")


class _Backend:
    def __init__(self, name="nccl", carries=True):
        self.name, self.carries, self.copies = name, carries, 0

    def supports(self, kind, arrays, op, compression):
        return self.carries

    def to_host(self, array):
        self.copies += 1
        return np.asarray(array) + 0


def test_the_device_is_asked_for_its_backend_and_may_refuse():
    backend = _Backend()
    gpu = types.SimpleNamespace(collective_backend=lambda: backend)
    assert device_backend(gpu, "allreduce", [np.zeros(2)], "sum", "none") is backend
    assert device_backend(types.SimpleNamespace(), "allreduce", [np.zeros(2)], "sum", "none") is None  # a CPU
    backend.carries = False
    assert device_backend(gpu, "allreduce", [np.zeros(2)], "sum", "none") is None
    assert device_backend(types.SimpleNamespace(collective_backend=lambda: None), "broadcast", [], "sum",
                          "none") is None  # a GPU whose NCCL did not load


def test_descriptors_name_the_backend_and_host_copies_go_through_it():
    backend = _Backend()
    request = Request("g", "allreduce", [np.ones(3, np.float32)], None, backend=backend)
    assert request.descriptor()[6] == "nccl"
    assert Request("g", "allreduce", [np.ones(3, np.float32)], None).descriptor()[6] == ""
    host = request.host_arrays()
    assert backend.copies == 1 and host[0].tolist() == [1.0, 1.0, 1.0]


def _descriptor(backend, dtype="<f4"):
    return ("allreduce", ((dtype, (4,)),), "sum", 0, "auto", "none", backend)


def test_batches_use_a_backend_only_when_every_rank_asked_for_it_and_never_fuse_across_backends():
    settings = Settings(fusion_threshold=1 << 20)
    ready = [("a", [_descriptor("nccl")] * 2), ("b", [_descriptor("nccl")] * 2), ("c", [_descriptor("")] * 2),
             ("d", [_descriptor("nccl"), _descriptor("")]), ("e", [_descriptor("nccl")] * 2)]
    batches = negotiation.plan_batches(ready, settings)
    assert [(b.names, b.backend) for b in batches] == [(["a", "b"], "nccl"), (["c", "d"], ""), (["e"], "nccl")]
    legacy = ("allreduce", (("<f4", (4,)),), "sum", 0, "auto", "none")  # a 6-field descriptor: MPI
    assert negotiation.common_backend([legacy, legacy]) == ""


JOB = r'''
import threading, types
import numpy as np
import tensorweave_distributed as twd
from mpi4py import MPI
from tensorweave_distributed import collective_kernels
from tensorweave_distributed.controller import Request
from tensorweave_distributed.world import get_world

twd.init()
world = get_world()
rank, size = world.rank, world.size
assert size == 2, size


class DeviceArray:
    """Stands in for a cupy array: values the host reaches only through to_host."""
    def __init__(self, values):
        self.values, self.dtype, self.shape = values, values.dtype, values.shape


class StandInBackend:
    name = "nccl"

    def __init__(self):
        self.batches, self.copies = [], 0

    def supports(self, kind, arrays, op, compression):
        return all(isinstance(a, DeviceArray) for a in arrays)

    def to_host(self, array):
        self.copies += 1
        return array.values.copy()

    def run(self, batch, groups, comm):
        self.batches.append(list(batch.names))
        out = []
        for group in groups:
            results = []
            for array in group:
                buf = array.values.copy()
                yield [comm.Iallreduce(MPI.IN_PLACE, buf, MPI.SUM)]
                results.append(DeviceArray(buf))
            out.append(results)
        return out


def submit(name, array, backend):
    box, done = [], threading.Event()
    world.collectives.submit([Request(name, "allreduce", [array], lambda e, v: (box.append((e, v)), done.set()),
                                      "sum", 0, "auto", "none", backend)])
    assert done.wait(30), name
    assert box[0][0] is None, box[0][0]
    return box[0][1][0]


backend = StandInBackend()
mine = np.arange(4, dtype=np.float32) * (rank + 1)
both = submit("both", DeviceArray(mine), backend)
assert isinstance(both, DeviceArray) and both.values.tolist() == [0, 3, 6, 9], both
assert backend.batches == [["both"]] and backend.copies == 0

# rank 1 holds its tensor on the host: the ranks disagree, so MPI reduces host copies on both
mixed = submit("mixed", DeviceArray(mine) if rank == 0 else mine, backend if rank == 0 else None)
assert isinstance(mixed, np.ndarray) and mixed.tolist() == [0, 3, 6, 9], mixed
assert backend.batches == [["both"]] and backend.copies == (1 if rank == 0 else 0)


# the graph kernel: it asks the node's device, hands device arrays over, and keeps device results as they are
class Device:
    def __init__(self, backend):
        self.backend, self.from_host_calls = backend, 0

    def collective_backend(self):
        return self.backend

    def to_host(self, value):
        return value.values if isinstance(value, DeviceArray) else value

    def from_host(self, value):
        self.from_host_calls += 1
        return DeviceArray(value)


def run_kernel(name, device, value):
    node = types.SimpleNamespace(attrs={"reduction": "sum", "collective_name": name}, op_type="MpiAllReduce",
                                 name=name, session_config=None, device=device)
    cancellation = types.SimpleNamespace(register=lambda fn: 1, deregister=lambda token: None)
    ctx = types.SimpleNamespace(frame_id=None, iteration=0, cancellation=cancellation)
    box, done = [], threading.Event()
    collective_kernels._build(node)(ctx, lambda result: (box.append(result), done.set()), value)
    assert done.wait(30), name
    assert not isinstance(box[0], Exception), box[0]
    return box[0][0]


gpu = Device(StandInBackend())
result = run_kernel("kernel_on_backend", gpu, DeviceArray(mine))
assert isinstance(result, DeviceArray) and result.values.tolist() == [0, 3, 6, 9]
assert gpu.backend.batches == [["kernel_on_backend"]] and gpu.from_host_calls == 0
cpu_like = Device(None)
result = run_kernel("kernel_on_mpi", cpu_like, DeviceArray(mine))
assert result.values.tolist() == [0, 3, 6, 9] and cpu_like.from_host_calls == 1
print(f"routing ok on rank {rank}", flush=True)
'''


def test_a_two_rank_job_routes_collectives_by_backend(tmp_path):
    _needs_mpiexec()
    script = tmp_path / "routing_job.py"
    script.write_text(textwrap.dedent(JOB))
    proc = subprocess.run([str(MPIEXEC), "-n", "2", sys.executable, "-m", "mpi4py", str(script)], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "routing ok on rank 0" in proc.stdout and "routing ok on rank 1" in proc.stdout, proc.stdout


# ---- NCCL itself: one rank per GPU ------------------------------------------------------------------------------
def _nccl_reason():
    if not CUDA.available:
        return f"no usable CUDA here: {CUDA.reason}"
    from tensorweave_cuda.nccl import nccl_module
    if nccl_module() is None:
        return "NCCL's library does not load: pip install nvidia-nccl-cu12 (or cu13, matching cupy)"
    return None


NCCL_JOB = r'''
import threading
import numpy as np
import cupy
import tensorweave_distributed as twd
from tensorweave_distributed.controller import Request
from tensorweave_distributed.world import get_world
from tensorweave_cuda.nccl import NcclCollectives

twd.init()
world = get_world()
rank, size = world.rank, world.size
device = cupy.cuda.Device(rank % cupy.cuda.runtime.getDeviceCount())
with device:
    stream = cupy.cuda.Stream(non_blocking=True)
backend = NcclCollectives(cupy, device, stream)


def run(kind, arrays, op="sum", root=0, compression="none"):
    box, done = [], threading.Event()
    assert backend.supports(kind, arrays, op, compression), (kind, [a.dtype for a in arrays])
    world.collectives.submit([Request(f"{kind}-{op}-{compression}-{arrays[0].dtype}", kind, arrays,
                                      lambda e, v: (box.append((e, v)), done.set()), op, root, "auto", compression,
                                      backend)])
    assert done.wait(60)
    assert box[0][0] is None, box[0][0]
    return [cupy.asnumpy(v) for v in box[0][1]]


def values(r, dtype, rows=5):
    return (np.arange(rows * 3).reshape(rows, 3) % 7 + r).astype(dtype)


with device:
    for dtype in (np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8, np.complex64):
        for op in ("sum", "mean", "max", "min"):
            if np.dtype(dtype).kind == "c" and op in ("max", "min"):
                continue
            stack = np.stack([values(r, dtype).astype(np.complex128 if dtype == np.complex64 else np.float64)
                              for r in range(size)])
            want = {"sum": stack.sum(0), "max": stack.max(0), "min": stack.min(0),
                    "mean": stack.sum(0) // size if np.dtype(dtype).kind in "iu" else stack.sum(0) / size}[op]
            got = run("allreduce", [cupy.asarray(values(rank, dtype))], op)[0]
            assert got.dtype == dtype and np.allclose(got, want.astype(dtype), rtol=1e-3), (dtype, op, got, want)
    got = run("allreduce", [cupy.asarray(values(rank, np.float32))], "sum", compression="float16")[0]
    assert np.allclose(got, sum(values(r, np.float32) for r in range(size)), rtol=1e-3)
    got = run("broadcast", [cupy.asarray(values(rank, np.int16))], root=size - 1)[0]
    assert (got == values(size - 1, np.int16)).all()
    got = run("allgather", [cupy.asarray(values(rank, np.float32, rows=rank + 1))])[0]
    assert (got == np.concatenate([values(r, np.float32, rows=r + 1) for r in range(size)])).all()
    got = run("reduce_scatter", [cupy.asarray(values(rank, np.float64, rows=7))])[0]
    total = sum(values(r, np.float64, rows=7) for r in range(size))
    base, extra = divmod(7, size)
    start = rank * base + min(rank, extra)
    assert (got == total[start:start + base + (1 if rank < extra else 0)]).all()
print(f"nccl ok on rank {rank}", flush=True)
'''


@pytest.mark.skipif(_nccl_reason() is not None, reason=_nccl_reason() or "")
def test_nccl_collectives_match_numpy_on_every_rank(tmp_path):
    import cupy
    _needs_mpiexec()
    ranks = min(2, cupy.cuda.runtime.getDeviceCount())
    script = tmp_path / "nccl_job.py"
    script.write_text(textwrap.dedent(NCCL_JOB))
    proc = subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable, "-m", "mpi4py", str(script)],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(ranks):
        assert f"nccl ok on rank {r}" in proc.stdout, proc.stdout


def test_the_unique_id_crosses_the_wire_in_the_form_cupy_gave_it():
    from tensorweave_cuda.nccl import unique_id_from_wire, unique_id_to_wire
    as_bytes = bytes(range(100, 228))  # CuPy 14: bytes (found on a GPU: earlier code parsed them as numbers)
    wire = unique_id_to_wire(as_bytes)
    assert wire.dtype == np.int8 and wire.size == 129 and unique_id_from_wire(wire) == as_bytes
    as_tuple = tuple(range(-64, 64))  # earlier CuPy: signed byte values
    assert unique_id_from_wire(unique_id_to_wire(as_tuple)) == as_tuple
    with pytest.raises(ValueError, match="has 3 bytes, expected 128"):
        unique_id_to_wire(b"abc")


def test_a_gpu_device_offers_one_nccl_backend_and_none_without_nccl(monkeypatch):
    from tensorweave_cuda import nccl
    from tensorweave_cuda.device import GPUDevice
    device = types.SimpleNamespace(cupy=object(), cuda_device=object(), stream=object())
    monkeypatch.setattr(nccl, "nccl_module", lambda: None)
    assert nccl.backend_for(device) is None
    monkeypatch.setattr(nccl, "nccl_module", lambda: types.SimpleNamespace(available=True))
    backend = nccl.backend_for(device)
    assert isinstance(backend, nccl.NcclCollectives) and backend.name == "nccl"
    assert nccl.backend_for(device) is backend  # one per device: its communicators are kept
    assert backend.stream is device.stream and backend.cuda_device is device.cuda_device
    gpu = GPUDevice.__new__(GPUDevice)
    gpu.cupy, gpu.cuda_device, gpu.stream = device.cupy, device.cuda_device, device.stream
    assert isinstance(gpu.collective_backend(), nccl.NcclCollectives)
