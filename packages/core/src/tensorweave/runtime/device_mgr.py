"""DeviceMgr: the devices of one process (one task), made by the registered device types."""

import threading

from tensorweave import errors
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.registry import get_registries
from tensorweave.runtime.device import DeviceContext


class DeviceMgr:
    def __init__(self, config=None, job="localhost", replica=0, task=0):
        self.name_prefix = f"/job:{job}/replica:{replica}/task:{task}"
        self.job, self.replica, self.task = job, replica, task
        counts = dict(getattr(config, "device_count", None) or {})
        context = DeviceContext(self.name_prefix, config)
        self.devices = []
        self.type_priority = {}
        for dtype in get_registries().devices.all():
            if not dtype.available:
                continue
            count = counts.get(dtype.name, dtype.default_count)
            if count <= 0:
                continue
            made = list(dtype.factory(count, context))
            self.devices.extend(made)
            self.type_priority[dtype.name] = dtype.priority
        self._by_name = {d.name: d for d in self.devices}
        for d in self.devices:  # short aliases such as /device:CPU:0 and /cpu:0
            self._by_name.setdefault(f"/device:{d.device_type}:{d.index}", d)

    def lookup(self, name):
        d = self._by_name.get(name)
        if d is None:
            spec = DeviceSpec.from_string(name)
            matches = self.matching(spec)
            if not matches:
                raise errors.InvalidArgumentError(None, None, f"unknown device {name!r}; devices here: "
                                                              f"{', '.join(self.names()) or 'none'}")
            d = matches[0]
        return d

    def matching(self, spec):
        """Devices a (partial) spec allows, in preference order (device-type priority, then index)."""
        if not isinstance(spec, DeviceSpec):
            spec = DeviceSpec.from_string(spec)
        found = []
        for d in self.devices:
            if spec.job is not None and spec.job != self.job:
                continue
            if spec.replica is not None and spec.replica != self.replica:
                continue
            if spec.task is not None and spec.task != self.task:
                continue
            if spec.device_type is not None and spec.device_type != d.device_type:
                continue
            if spec.device_index is not None and spec.device_index != d.index:
                continue
            found.append(d)
        return sorted(found, key=lambda d: (-self.type_priority.get(d.device_type, 0), d.device_type, d.index))

    def names(self):
        return [d.name for d in self.devices]

    def host_device(self):
        for d in self.devices:
            if d.is_host:
                return d
        return self.devices[0] if self.devices else None

    def reset(self, containers=None):
        for d in self.devices:
            if containers is None:
                d.resource_manager.cleanup()
            else:
                for c in containers:
                    d.resource_manager.cleanup(c)

    def close(self):
        for d in self.devices:
            d.close()


_shared_lock = threading.Lock()
_shared = {}


def shared_device_mgr(target, config=None):
    """The process-wide DeviceMgr of a named in-process target; resources there outlive sessions."""
    with _shared_lock:
        mgr = _shared.get(target)
        if mgr is None:
            mgr = _shared[target] = DeviceMgr(config)
        return mgr


def reset_target(target, containers=None):
    with _shared_lock:
        mgr = _shared.get(target)
    if mgr is not None:
        mgr.reset(containers)
