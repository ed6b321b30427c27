"""The plugin entry point: registers the CPU device type and every CPU kernel module (native ones above numpy)."""

import importlib

from tensorweave.hookspecs import hookimpl

from tensorweave_cpu.device import cpu_device_factory

KERNEL_MODULES = (
    "tensorweave_cpu.kernels.array",
    "tensorweave_cpu.kernels.shape",
    "tensorweave_cpu.kernels.fill",
    "tensorweave_cpu.kernels.concat_split",
    "tensorweave_cpu.kernels.transpose",
    "tensorweave_cpu.kernels.pad_tile",
    "tensorweave_cpu.kernels.slicing",
    "tensorweave_cpu.kernels.gather",
    "tensorweave_cpu.kernels.control_flow",
    "tensorweave_cpu.kernels.data_flow",
    "tensorweave_cpu.kernels.accumulators",
    "tensorweave_cpu.kernels.io",
    "tensorweave_cpu.kernels.datasets",
    "tensorweave_cpu.kernels.iterators",
    "tensorweave_cpu.kernels.parsing",
    "tensorweave_cpu.kernels.decode",
    "tensorweave_cpu.kernels.linalg",
    "tensorweave_cpu.kernels.matrix_diag",
    "tensorweave_cpu.kernels.matrix_band",
    "tensorweave_cpu.kernels.math",
    "tensorweave_cpu.kernels.bitwise",
    "tensorweave_cpu.kernels.bucketing",
    "tensorweave_cpu.kernels.sets",
    "tensorweave_cpu.kernels.special",
    "tensorweave_cpu.kernels.numerics",
    "tensorweave_cpu.kernels.reductions",
    "tensorweave_cpu.kernels.segments",
    "tensorweave_cpu.kernels.matmul",
    "tensorweave_cpu.kernels.nn",
    "tensorweave_cpu.kernels.conv",
    "tensorweave_cpu.kernels.depthwise_conv",
    "tensorweave_cpu.kernels.conv3d",
    "tensorweave_cpu.kernels.space_depth",
    "tensorweave_cpu.kernels.space_batch",
    "tensorweave_cpu.kernels.base64",
    "tensorweave_cpu.kernels.ctc",
    "tensorweave_cpu.kernels.ctc_beam_search",
    "tensorweave_cpu.kernels.pooling",
    "tensorweave_cpu.kernels.losses",
    "tensorweave_cpu.kernels.dynamic_partition",
    "tensorweave_cpu.kernels.normalization",
    "tensorweave_cpu.kernels.candidate_sampling",
    "tensorweave_cpu.kernels.random",
    "tensorweave_cpu.kernels.state",
    "tensorweave_cpu.kernels.training",
    "tensorweave_cpu.kernels.fused",
    "tensorweave_cpu.kernels.image_resize",
    "tensorweave_cpu.kernels.image_color",
    "tensorweave_cpu.kernels.image_codecs",
    "tensorweave_cpu.kernels.script",
    "tensorweave_cpu.kernels.sparse",
    "tensorweave_cpu.kernels.sparse_slicing",
    "tensorweave_cpu.kernels.sparse_elementwise",
    "tensorweave_cpu.kernels.checkpoint_remap",
    "tensorweave_cpu.kernels.sparse_cross",
    "tensorweave_cpu.kernels.string_split",
    "tensorweave_cpu.kernels.strings",
    "tensorweave_cpu.kernels.lookup",
    "tensorweave_cpu.kernels.image_boxes",
    "tensorweave_cpu.kernels.native",
)


@hookimpl
def tensorweave_register_devices(registrar):
    registrar.add_device_type("CPU", cpu_device_factory, priority=0, default_count=1)


@hookimpl
def tensorweave_register_kernels(registrar):
    for name in KERNEL_MODULES:
        registrar.add_kernels(importlib.import_module(name).KERNELS)
    registrar.add_note(importlib.import_module("tensorweave_cpu.kernels.native").STATUS)
