"""``device_lib.list_local_devices()``: the devices a session in this process would get, as TF1 reports them
(programs call it to find their GPUs)."""

import os
from dataclasses import dataclass

from tensorweave.runtime.device_mgr import DeviceMgr

__all__ = ["DeviceAttributes", "list_local_devices"]


@dataclass(frozen=True)
class DeviceAttributes:
    """TF's DeviceAttributes proto's fields that programs read."""

    name: str
    device_type: str
    memory_limit: int
    incarnation: int
    physical_device_desc: str


def _memory_limit(device):
    total = getattr(device, "total_memory", None)
    if total is not None:
        return int(total)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if device.is_host else 0


def list_local_devices(session_config=None):
    """Every local device (name ``/device:CPU:0`` as TF's), with the ``device_count`` of ``session_config``."""
    return [DeviceAttributes(f"/device:{d.device_type}:{d.index}", d.device_type, _memory_limit(d), d.incarnation,
                             d.description) for d in DeviceMgr(session_config).devices]
