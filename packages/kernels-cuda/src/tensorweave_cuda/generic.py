"""The CPU package's array-namespace kernels, registered for the GPU: one function serves both devices.

Each kernels-cpu module names its generic ops in ``ARRAY_NAMESPACE_GENERIC``; their kernels pick the array module
from the node's device when built, so on a GPU they call cupy. Here each becomes a ``GPUKernelDef``: the same
build function, run through the device's ``bind`` (device, stream, out-of-memory errors), refusing string dtypes
(CuPy has no strings), at ``GENERIC_PRIORITY`` so a hand-written CUDA kernel of the same op wins.
"""

import importlib

from tensorweave.extension import KernelDef, KernelSet, dtypes

from tensorweave_cpu.plugin import KERNEL_MODULES

GENERIC_PRIORITY = -1
HOST_ONLY_DTYPES = frozenset({dtypes.string, dtypes.bfloat16})  # CuPy has no bfloat16: the CPU computes it


class GPUKernelDef(KernelDef):
    """A kernel for a device with its own memory: matches only nodes none of whose type attrs is host-only."""

    __slots__ = ()

    def matches(self, attrs):
        for value in attrs.values():
            values = value if isinstance(value, (list, tuple)) else (value,)
            if any(isinstance(v, dtypes.DType) and v in HOST_ONLY_DTYPES for v in values):
                return False
        return super().matches(attrs)


def on_device(build):
    """``build`` whose compute runs through ``node.device.bind`` (device and stream current, errors named)."""
    def build_bound(node):
        return node.device.bind(build(node), node)
    return build_bound


def retarget(kernel_def, device_type, priority=GENERIC_PRIORITY, label=None):
    """A copy of ``kernel_def`` (same build, dtypes, calling convention) for ``device_type``."""
    constraints = {attr: sorted(allowed, key=lambda t: t.name) for attr, allowed in kernel_def.constraints.items()}
    return GPUKernelDef(kernel_def.op_type, device_type, on_device(kernel_def.build), constraints, priority,
                        kernel_def.context, kernel_def.asynchronous, kernel_def.label if label is None else label,
                        kernel_def.compute)


def generic_kernels(modules=KERNEL_MODULES):
    """(module name, KernelDef) of every CPU kernel its module marks array-namespace generic."""
    found = []
    for name in modules:
        module = importlib.import_module(name)
        marked = getattr(module, "ARRAY_NAMESPACE_GENERIC", frozenset())
        registered = {k.op_type for k in module.KERNELS}
        unknown = sorted(marked - registered)
        if unknown:
            raise ValueError(f"{name}.ARRAY_NAMESPACE_GENERIC names {unknown}, which {name} registers no kernel "
                             f"for; fix the list in that module")
        found.extend((name, k) for k in module.KERNELS if k.op_type in marked)
    return found


def generic_kernel_set(device_type="GPU"):
    """The generic CPU kernels as one KernelSet for ``device_type``."""
    kernels = KernelSet(device_type, priority=GENERIC_PRIORITY)
    kernels.extend(retarget(k, device_type, label="array namespace") for _, k in generic_kernels())
    return kernels
