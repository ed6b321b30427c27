"""The CPU device: host memory, numpy arrays. ``ConfigProto(device_count={'CPU': N})`` makes N of them."""

import os

from tensorweave.extension import Device


class CPUDevice(Device):
    is_host = True

    def __init__(self, name, index):
        super().__init__(name, "CPU", index, description=f"host CPU ({os.cpu_count()} cores)")


def cpu_device_factory(count, context):
    return [CPUDevice(context.device_name("CPU", i), i) for i in range(count)]
