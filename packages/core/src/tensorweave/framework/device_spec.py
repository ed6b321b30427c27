"""Device names ``/job:J/replica:R/task:T/device:TYPE:N``: parsing, partial specs, merging, and the short form
in the names of nodes the runtime inserts."""

import re

_LEGACY = re.compile(r"^(cpu|gpu|[a-z][a-z0-9_]*):(\d+|\*)$", re.IGNORECASE)


class DeviceSpec:
    """A possibly partial device name. Unset fields are None; ``device_index`` None means any."""

    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = None if device_type is None else _canon_type(device_type)
        self.device_index = None if device_index is None else int(device_index)

    @classmethod
    def from_string(cls, spec):
        if isinstance(spec, DeviceSpec):
            return spec.copy()
        spec = (spec or "").strip()
        out = cls()
        if not spec:
            return out
        for part in spec.strip("/").split("/"):
            if not part:
                continue
            key, _, value = part.partition(":")
            key_l = key.lower()
            if key_l == "job" and value:
                out.job = value
            elif key_l == "replica" and value:
                out.replica = int(value)
            elif key_l == "task" and value:
                out.task = int(value)
            elif key_l == "device" and value:
                dtype, _, index = value.partition(":")
                out.device_type = _canon_type(dtype)
                out.device_index = None if index in ("", "*") else int(index)
            elif _LEGACY.match(part):
                dtype, index = part.split(":")
                out.device_type = _canon_type(dtype)
                out.device_index = None if index == "*" else int(index)
            elif not value and key and out.device_type is None and key.isalnum():
                out.device_type = _canon_type(key)
            else:
                raise ValueError(f"cannot parse device spec {spec!r} at {part!r}; expected "
                                 f"'/job:<name>/replica:<n>/task:<n>/device:<TYPE>:<n>' or '/cpu:0'")
        return out

    def copy(self):
        return DeviceSpec(self.job, self.replica, self.task, self.device_type, self.device_index)

    def merge_from(self, other):
        """Fills this spec's fields from ``other`` where ``other`` sets them (other wins)."""
        other = DeviceSpec.from_string(other) if not isinstance(other, DeviceSpec) else other
        for field in self.__slots__:
            value = getattr(other, field)
            if value is not None:
                setattr(self, field, value)
        if other.device_type is not None and other.device_index is None:
            self.device_index = None
        return self

    def make_merged_spec(self, other):
        return self.copy().merge_from(other)

    def is_compatible_with(self, other):
        """Whether a device named by ``other`` satisfies every field this spec sets."""
        other = DeviceSpec.from_string(other) if not isinstance(other, DeviceSpec) else other
        for field in self.__slots__:
            mine, theirs = getattr(self, field), getattr(other, field)
            if mine is not None and theirs is not None and mine != theirs:
                return False
        return True

    def to_string(self):
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            parts.append(f"/device:{self.device_type}:{'*' if self.device_index is None else self.device_index}")
        return "".join(parts)

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return f"DeviceSpec({self.to_string()!r})"

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())


def _canon_type(device_type):
    return device_type.upper() if device_type.lower() in ("cpu", "gpu") else device_type.upper()


def canonical_name(spec):
    """The canonical string of a device spec (``""`` for no constraint)."""
    return DeviceSpec.from_string(spec).to_string()


def short_device(device_name):
    """``/job:w/replica:0/task:1/device:CPU:0`` -> ``w_1_CPU_0`` (``CPU_0`` for this process's job)."""
    if not device_name:
        return "dev"
    parts = dict(p.split(":", 1) for p in device_name.strip("/").split("/") if ":" in p)
    kind = parts.get("device", device_name.rsplit("/", 1)[-1]).replace(":", "_")
    if parts.get("job", "localhost") == "localhost":
        return kind
    return f"{parts['job']}_{parts.get('task', '0')}_{kind}"
