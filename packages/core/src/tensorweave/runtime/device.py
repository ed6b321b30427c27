"""Device: one place kernels run, with its own resource containers. Plugins subclass it."""

import random

import numpy

from tensorweave.runtime.resources import ResourceManager


class DeviceContext:
    """What a device factory gets: the task's name prefix and the session config."""

    def __init__(self, name_prefix="/job:localhost/replica:0/task:0", config=None):
        self.name_prefix = name_prefix
        self.config = config

    def device_name(self, device_type, index):
        return f"{self.name_prefix}/device:{device_type}:{index}"


class Device:
    """A device. ``to_host``/``from_host`` move values to and from numpy (identity on host devices).

    ``flops_per_second`` and ``bytes_per_second`` seed the cost model until real timings exist (the
    defaults: numpy's BLAS and memory speed on a small 2-core machine).
    """

    is_host = True
    is_remote = False  # a device of another process: placed and keyed here, run over there
    array_module = numpy  # kernels written against ``xp`` get this module
    flops_per_second = 1e11
    bytes_per_second = 1e10

    def __init__(self, name, device_type, index, description=""):
        self.name = name
        self.device_type = device_type
        self.index = index
        self.description = description
        self.incarnation = random.getrandbits(63)  # tells a restarted device's tensors from the old one's
        self.resource_manager = ResourceManager(name)

    def to_host(self, value):
        return value

    def from_host(self, value):
        return value

    def synchronize(self):
        """Waits for queued work (no-op on synchronous devices)."""

    def close(self):
        self.resource_manager.cleanup()

    def __repr__(self):
        return f"<Device {self.name}>"
