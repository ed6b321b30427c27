"""The package without a GPU: it installs and imports, the probe says why there is no GPU, the plugin listing
shows it, the GPU kernel set covers the CPU package's ops, and the error paths name what to do."""

import contextlib
import subprocess
import sys
import types

import pytest

import tensorweave as tf
from tensorweave import plugins
from tensorweave.extension import KernelDef, dtypes

import tensorweave_cuda
from tensorweave_cuda import availability
from tensorweave_cuda.device import GPUDevice, visible_devices
from tensorweave_cuda.generic import GENERIC_PRIORITY, GPUKernelDef, generic_kernel_set, generic_kernels, retarget
from tensorweave_cuda.host_ops import HOST_OPS
from tensorweave_cuda.plugin import cuda_kernel_modules, gpu_kernels
from tensorweave_cpu.plugin import KERNEL_MODULES

from conftest import CUDA


def _fake_cupy(available, count=0, error=None, version="14.0.0"):
    def get_device_count():
        if error:
            raise RuntimeError(error)
        return count
    runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
    cuda = types.SimpleNamespace(is_available=lambda: available, runtime=runtime)
    return types.SimpleNamespace(__version__=version, cuda=cuda)


def test_probe_without_cupy_says_so_and_how_to_install():
    def no_cupy(name):
        raise ImportError(f"No module named {name!r}")
    status = availability.probe(no_cupy)
    assert not status.available and status.cupy is None and status.device_count == 0
    assert status.reason.startswith("no CuPy installed") and "tensorweave-kernels-cuda[cuda13]" in status.reason


def test_probe_with_cupy_but_no_driver_quotes_the_driver_error():
    error = "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version"
    status = availability.probe(lambda name: _fake_cupy(False, error=error))
    assert not status.available and status.cupy is not None
    assert "CuPy 14.0.0 is installed but no CUDA device is usable" in status.reason and error in status.reason


def test_probe_counts_devices_and_reports_broken_imports():
    assert availability.probe(lambda name: _fake_cupy(True, count=2)).device_count == 2
    zero = availability.probe(lambda name: _fake_cupy(True, count=0))
    assert not zero.available and "sees no CUDA device" in zero.reason

    def broken(name):
        raise OSError("libcudart.so.13: cannot open shared object file")
    assert "CuPy failed to import: OSError: libcudart.so.13" in availability.probe(broken).reason


def test_this_machine_probe_agrees_with_cupy():
    cupy = pytest.importorskip("cupy")
    assert CUDA.available == cupy.cuda.is_available()
    assert tensorweave_cuda.probe().reason == CUDA.reason


@pytest.mark.skipif(CUDA.available, reason="this machine has a usable GPU")
def test_without_cuda_the_listing_says_why_and_sessions_have_no_gpu():
    info = {p.name: p for p in plugins.list_plugins()}["cuda"]
    assert info.ok and info.distribution == "tensorweave-kernels-cuda"
    assert info.devices == [] and info.unavailable_devices == [f"GPU: {CUDA.reason}"]
    assert "MatMul@GPU[array namespace]" in info.kernels
    out = subprocess.run([sys.executable, "-m", "tensorweave.cli", "plugins"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    block = out.stdout.split("\ncuda [", 1)[1].split("\n", 1)[1].split("\n", 4)
    assert any(line.strip() == f"devices not available (1): GPU: {CUDA.reason}" for line in block)
    x = tf.constant([[1.0, 2.0]])
    y = tf.matmul(x, x, transpose_b=True)
    with tf.Session() as s:
        assert "GPU" not in {d.device_type for d in s.list_devices()}
        assert s.run(y).tolist() == [[5.0]]


def test_generic_kernels_are_the_cpu_kernels_marked_in_each_module():
    import importlib
    found = generic_kernels()
    marked = set()
    for name in KERNEL_MODULES:
        module = importlib.import_module(name)
        ops = getattr(module, "ARRAY_NAMESPACE_GENERIC", frozenset())
        assert ops <= {k.op_type for k in module.KERNELS}, name
        marked |= ops
    assert {k.op_type for _, k in found} == marked
    assert "tensorweave_cpu.kernels.native" not in {m for m, _ in found}  # native C++ never goes to the GPU
    assert "tensorweave_cpu.kernels.fused" not in {m for m, _ in found}
    assert {"MatMul", "Add", "Softmax", "Sum", "Reshape", "ConcatV2", "GatherV2", "ReadVariableOp"} <= marked
    assert not marked & {"Const", "AssignVariableOp", "Unique", "SegmentSum", "Conv2D", "RandomUniform"}


def test_generic_kernel_set_reuses_each_build_on_the_gpu_below_cuda_kernels():
    cpu = {id(k): k for _, k in generic_kernels()}
    gpu = generic_kernel_set()
    assert len(gpu) == len(cpu) and all(isinstance(k, GPUKernelDef) for k in gpu)
    assert {k.device_type for k in gpu} == {"GPU"} and {k.priority for k in gpu} == {GENERIC_PRIORITY}
    by_op = {}
    for _, k in generic_kernels():
        by_op.setdefault(k.op_type, []).append(k)
    for k in gpu:
        twins = by_op[k.op_type]
        assert any(t.constraints == k.constraints and t.context == k.context and t.asynchronous == k.asynchronous
                   for t in twins), k.op_type
        assert k.label == "array namespace"


def test_a_bad_mark_is_refused_naming_the_module(monkeypatch):
    from tensorweave_cpu.kernels import fill
    monkeypatch.setattr(fill, "ARRAY_NAMESPACE_GENERIC", fill.ARRAY_NAMESPACE_GENERIC | {"NoSuchOp"})
    with pytest.raises(ValueError, match=r"tensorweave_cpu.kernels.fill.ARRAY_NAMESPACE_GENERIC names \['NoSuchOp'\]"):
        generic_kernels()


def test_every_op_the_cpu_package_covers_has_a_gpu_kernel_or_stays_on_the_host_for_a_reason():
    registries = plugins.get_registries()
    cpu_ops = {op for op in registries.kernels.op_types()
               if any(k.plugin == "cpu" for k in registries.kernels.kernels_for(op))}
    gpu_ops = {k.op_type for k in gpu_kernels()[0]}
    registered = {op for op in registries.kernels.op_types() if "GPU" in registries.kernels.device_types_for(op)}
    assert gpu_ops == registered  # the plugin registered the whole set
    assert sorted(cpu_ops - gpu_ops - set(HOST_OPS)) == []
    assert set(HOST_OPS) <= cpu_ops and not set(HOST_OPS) & gpu_ops  # no stale or contradicting entries
    assert all(len(reason) > 30 for reason in HOST_OPS.values())


def test_cuda_kernel_modules_each_bring_gpu_kernels():
    import importlib
    for name in cuda_kernel_modules():
        kernels = importlib.import_module(name).KERNELS
        assert kernels and {k.device_type for k in kernels} == {"GPU"}, name
        assert min(k.priority for k in kernels) > GENERIC_PRIORITY, name


def _attrs(**kw):
    return {k: dtypes.as_dtype(v) for k, v in kw.items()}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                                   "bool", "complex64"])
def test_gpu_kernels_match_numeric_dtypes(dtype):
    kernel = retarget(KernelDef("Add", "CPU", lambda node: None), "GPU")
    assert kernel.matches(_attrs(T=dtype))


def test_gpu_kernels_refuse_strings_in_any_type_attr_and_keep_cpu_constraints():
    kernel = retarget(KernelDef("Cast", "CPU", lambda node: None), "GPU")
    assert not kernel.matches(_attrs(SrcT="string", DstT="float32"))
    assert not kernel.matches({"Tlist": [dtypes.float32, dtypes.string]})
    conv = retarget(KernelDef("Conv2D", "CPU", lambda node: None, {"T": ["float32"]}), "GPU")
    assert conv.matches(_attrs(T="float32")) and not conv.matches(_attrs(T="int32"))


def test_placement_prefers_a_cuda_kernel_over_the_generic_one_of_the_same_op():
    registries = plugins.get_registries()
    chosen = registries.kernels.find("SoftmaxCrossEntropyWithLogits", "GPU", _attrs(T="float32"))
    if any(k.op_type == "SoftmaxCrossEntropyWithLogits" for m in cuda_kernel_modules()
           for k in __import__(m, fromlist=["KERNELS"]).KERNELS):
        assert chosen.priority > GENERIC_PRIORITY and chosen.label != "array namespace"
    else:
        assert chosen.label == "array namespace"
    assert registries.kernels.find("MatMul", "GPU", _attrs(T="float16")).label == "array namespace"
    assert registries.kernels.find("MatMul", "GPU", _attrs(T="string")) is None


def test_visible_device_list_picks_devices_and_refuses_bad_lists():
    assert visible_devices(None, 3) == [0, 1, 2]
    assert visible_devices(tf.GPUOptions(visible_device_list="2,0"), 3) == [2, 0]
    with pytest.raises(ValueError, match=r"names CUDA devices \[3\] but this machine has 2"):
        visible_devices(tf.GPUOptions(visible_device_list="0,3"), 2)
    with pytest.raises(ValueError, match="comma-separated CUDA device indices"):
        visible_devices(tf.GPUOptions(visible_device_list="gpu0"), 2)


class _Pool:
    def used_bytes(self):
        return 3 << 20

    def total_bytes(self):
        return 4 << 20

    def get_limit(self):
        return 8 << 20


class _OutOfMemory(MemoryError):
    """Stands in for cupy.cuda.memory.OutOfMemoryError (same base, same message), so no CuPy is needed."""

    def __init__(self, size, total, limit):
        super().__init__(f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes, limit set "
                         f"to: {limit:,} bytes).")


def _device_without_cuda():
    """A GPUDevice whose CUDA parts are stand-ins: bind and the error path need none of it."""
    device = object.__new__(GPUDevice)
    device.name, device.total_memory = "/job:localhost/replica:0/task:0/device:GPU:0", 16 << 30
    device.cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(
        memory=types.SimpleNamespace(OutOfMemoryError=_OutOfMemory)))
    device.cuda_device = device.stream = contextlib.nullcontext()
    device.memory_pool = _Pool()
    return device


def test_out_of_memory_becomes_resource_exhausted_naming_op_sizes_and_pool():
    import numpy as np
    node = types.SimpleNamespace(name="dense/MatMul", op_type="MatMul", source=None)

    def compute(a, b):
        raise _OutOfMemory(1 << 30, 3 << 20, 8 << 20)

    run = _device_without_cuda().bind(compute, node)
    with pytest.raises(tf.errors.ResourceExhaustedError) as caught:
        run(np.zeros((64, 784), np.float32), np.zeros((784, 256), np.float32))
    message = str(caught.value)
    assert "out of GPU memory on /job:localhost/replica:0/task:0/device:GPU:0" in message
    assert "op 'dense/MatMul' (MatMul)" in message
    assert "float32[64, 784] (200,704 bytes), float32[784, 256] (802,816 bytes)" in message
    assert "allocating 1,073,741,824 bytes" in message and "3,145,728 bytes in use" in message
    assert "of the device's 17,179,869,184 (limit 8,388,608)" in message
    assert "per_process_gpu_memory_fraction" in message


def test_cupy_out_of_memory_error_is_what_bind_catches():
    cupy = pytest.importorskip("cupy")
    assert issubclass(cupy.cuda.memory.OutOfMemoryError, MemoryError)
    assert "allocating 1,024 bytes" in str(cupy.cuda.memory.OutOfMemoryError(1024, 0, 0))


def test_other_kernel_errors_pass_through_bind_unchanged():
    def compute(x):
        raise ValueError("bad axis")

    with pytest.raises(ValueError, match="bad axis"):
        _device_without_cuda().bind(compute, types.SimpleNamespace(name="n", op_type="Sum"))(1)


REQUIRED_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def test_every_float_and_integer_dtype_a_cpu_kernel_takes_a_gpu_kernel_takes_too():
    from tensorweave.framework.apply_op import get_op_def
    kernels = plugins.get_registries().kernels
    required = [dtypes.as_dtype(name) for name in REQUIRED_DTYPES]
    gaps, checked = [], 0
    for op in kernels.op_types():
        if op in HOST_OPS or not any(k.plugin == "cpu" for k in kernels.kernels_for(op)):
            continue
        for attr in (a for a in get_op_def(op).attrs.values() if a.kind == "type"):
            for dtype in (t for t in (attr.allowed or required) if t in required):
                if kernels.find(op, "CPU", {attr.name: dtype}) is not None:
                    checked += 1
                    if kernels.find(op, "GPU", {attr.name: dtype}) is None:
                        gaps.append(f"{op}({attr.name}={dtype.name})")
    assert checked > 1000 and gaps == []
