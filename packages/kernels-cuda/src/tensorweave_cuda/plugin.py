"""The plugin entry point: one GPU device per visible CUDA device, and the GPU kernels.

Kernels register whether or not a GPU is here (they are only definitions), so ``tensorweave plugins`` lists the
GPU kernel set on any machine; the device type registers as unavailable with the reason when CUDA cannot be used.
GPU devices rank above the CPU, so the placer puts an op on a GPU whenever a GPU kernel matches it.
"""

import importlib

from tensorweave.extension import KernelSet
from tensorweave.hookspecs import hookimpl

from tensorweave_cuda.availability import probe
from tensorweave_cuda.device import gpu_device_factory
from tensorweave_cuda.generic import generic_kernel_set, retarget

DEVICE_PRIORITY = 10  # above the CPU's 0
OWN_KERNEL_MODULES = ("tensorweave_cuda.array_forms", "tensorweave_cuda.variable_kernels")


def cuda_kernel_modules():
    """The hand-written CUDA kernel modules' names (``tensorweave_cuda.kernels.CUDA_KERNEL_MODULES``)."""
    try:
        package = importlib.import_module("tensorweave_cuda.kernels")
    except ImportError:
        return ()
    return tuple(getattr(package, "CUDA_KERNEL_MODULES", ()))


def gpu_kernels(device_type="GPU", include_cuda=True):
    """(KernelSet of every GPU kernel, notes): the generic CPU kernels, this package's, and the CUDA ones.

    Each runs through its device's ``bind``. ``include_cuda=False`` leaves out the CUDA-only modules (for a
    stand-in device whose array module is numpy).
    """
    kernels = KernelSet(device_type)
    generic = generic_kernel_set(device_type)
    kernels.extend(generic)
    modules = OWN_KERNEL_MODULES + (cuda_kernel_modules() if include_cuda else ())
    failed = []
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            failed.append(f"{name} ({e})")
            continue
        kernels.extend(retarget(k, device_type, k.priority) for k in module.KERNELS)
    notes = [f"{device_type} kernels for {len({k.op_type for k in kernels})} ops: "
             f"{len({k.op_type for k in generic})} are the CPU package's array-namespace kernels run with cupy"]
    if failed:
        notes.append("GPU kernel modules not loaded: " + "; ".join(failed))
    return kernels, notes


@hookimpl
def tensorweave_register_kernels(registrar):
    kernels, notes = gpu_kernels()
    registrar.add_kernels(kernels)
    for note in notes:
        registrar.add_note(note)


@hookimpl
def tensorweave_register_devices(registrar):
    status = probe()
    if status.available:
        registrar.add_device_type("GPU", gpu_device_factory(status.cupy, status.device_count),
                                  priority=DEVICE_PRIORITY, default_count=status.device_count)
    else:
        registrar.add_device_type("GPU", lambda count, context: [], priority=DEVICE_PRIORITY, available=False,
                                  reason=status.reason)
