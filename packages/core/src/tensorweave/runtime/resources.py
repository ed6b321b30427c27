"""Resources (variables, queues, ...) kept in named containers on a device; they outlive steps."""

import threading

from tensorweave import errors

DEFAULT_CONTAINER = "localhost"


class Resource:
    """Base class of stateful objects that live in a container."""

    def debug_string(self):
        return type(self).__name__

    def close(self, error=None):
        """Called when the container is cleared or the session that owns it closes."""


class ResourceHandle:
    """The value of a ``resource`` tensor: where a resource lives, plus the resource itself."""

    __slots__ = ("device", "container", "name", "resource")

    def __init__(self, device, container, name, resource):
        self.device = device
        self.container = container
        self.name = name
        self.resource = resource

    def __repr__(self):
        return f"ResourceHandle({self.device}, {self.container}/{self.name}: {self.resource.debug_string()})"


class ResourceManager:
    """The containers of one device. Thread-safe."""

    def __init__(self, device_name):
        self.device_name = device_name
        self._containers = {}
        self._lock = threading.RLock()

    def lookup_or_create(self, container, name, creator):
        container = container or DEFAULT_CONTAINER
        with self._lock:
            bucket = self._containers.setdefault(container, {})
            res = bucket.get(name)
            if res is None:
                res = bucket[name] = creator()
            return res

    def lookup(self, container, name):
        container = container or DEFAULT_CONTAINER
        with self._lock:
            try:
                return self._containers[container][name]
            except KeyError:
                raise errors.NotFoundError(None, None, f"resource {container}/{name} does not exist on "
                                                       f"{self.device_name}") from None

    def create(self, container, name, resource):
        container = container or DEFAULT_CONTAINER
        with self._lock:
            bucket = self._containers.setdefault(container, {})
            if name in bucket:
                raise errors.AlreadyExistsError(None, None, f"resource {container}/{name} already exists on "
                                                            f"{self.device_name}")
            bucket[name] = resource

    def delete(self, container, name):
        container = container or DEFAULT_CONTAINER
        with self._lock:
            res = self._containers.get(container, {}).pop(name, None)
        if res is None:
            raise errors.NotFoundError(None, None, f"resource {container}/{name} does not exist on {self.device_name}")
        res.close()

    def cleanup(self, container=None):
        """Drops one container (or all); resources in it are closed."""
        with self._lock:
            if container is None:
                dropped = list(self._containers.values())
                self._containers.clear()
            else:
                dropped = [self._containers.pop(container, {})]
        for bucket in dropped:
            for res in bucket.values():
                res.close()

    def containers(self):
        with self._lock:
            return {c: sorted(b) for c, b in self._containers.items()}
