"""Shared by the kernels-cuda tests: the CUDA probe's verdict (GPU tests skip with its reason) and a numpy
stand-in for the GPU, so the GPU kernel set, placement and transfers run for real on a machine without CUDA."""

import numpy as np
import pytest

from tensorweave import plugins
from tensorweave.extension import Device, hookimpl

from tensorweave_cpu.kernels import training
from tensorweave_cuda import probe
from tensorweave_cuda.generic import retarget
from tensorweave_cuda.plugin import DEVICE_PRIORITY, gpu_kernels
from tensorweave_cuda.transfers import is_host_array

CUDA = probe()
requires_cuda = pytest.mark.skipif(not CUDA.available, reason=f"no usable CUDA here: {CUDA.reason}")

STAND_IN = "NPGPU"


class StandInGPU(Device):
    """A device with memory of its own whose array module is numpy: every copy and bound kernel is counted."""

    is_host = False

    def __init__(self, name, index):
        super().__init__(name, STAND_IN, index, description="numpy stand-in for a GPU (tests)")
        self.copies_in = self.copies_out = 0
        self.bound = []

    def bind(self, compute, node):
        self.bound.append(node.op_type)
        return compute

    def from_host(self, value):
        if not is_host_array(value):
            return value
        self.copies_in += 1
        return np.array(value, copy=True)

    def to_host(self, value):
        if not is_host_array(value):
            return value
        self.copies_out += 1
        return np.array(value, copy=True)


class StandInPlugin:
    """The GPU plugin's kernel set (without the CUDA-only modules) on the stand-in device, ranked as the GPU.

    In place of the CUDA optimizer kernels it gets the CPU package's numpy ones (numpy is its array module), so
    a model's variables live on it as they do on a GPU: placement is per plan, and a variable initialized on one
    device must not be updated by a later plan on another."""

    devices = []

    @hookimpl
    def tensorweave_register_kernels(self, registrar):
        registrar.add_kernels(gpu_kernels(STAND_IN, include_cuda=False)[0])
        registrar.add_kernels(retarget(k, STAND_IN, k.priority) for k in training.KERNELS)

    @hookimpl
    def tensorweave_register_devices(self, registrar):
        def factory(count, context):
            made = [StandInGPU(context.device_name(STAND_IN, i), i) for i in range(count)]
            StandInPlugin.devices = made
            return made
        registrar.add_device_type(STAND_IN, factory, priority=DEVICE_PRIORITY)


@pytest.fixture
def stand_in():
    """Loads the stand-in plugin for one test; yields the plugin class (its ``devices`` are the last made)."""
    plugins.reload(extra_plugins=[(StandInPlugin(), "npgpu")])
    yield StandInPlugin
    StandInPlugin.devices = []
    plugins.reload()
