"""The registries plugins fill: op definitions, kernels, device types, graph passes, transports, API modules."""

import functools
import inspect

from tensorweave import dtypes, errors
from tensorweave.framework.kernel_parameters import check_compute_parameters


class NamedRegistry:
    """Name → object, refusing duplicates; ops, device types, passes, transports and API modules."""

    def __init__(self, what, hint=""):
        self._what = what
        self._hint = hint
        self._items = {}
        self._plugins = {}

    def add(self, name, item, plugin):
        if name in self._items:
            raise ValueError(f"{self._what} {name!r} is registered twice: by plugin {self._plugins[name]!r} "
                             f"and by plugin {plugin!r}{self._hint}")
        self._items[name] = item
        self._plugins[name] = plugin

    def get(self, name):
        return self._items.get(name)

    def items(self):
        return list(self._items.items())

    def remove_plugin(self, plugin):
        for name in [n for n, p in self._plugins.items() if p == plugin]:
            del self._items[name], self._plugins[name]


class OpRegistry(NamedRegistry):
    def __init__(self):
        super().__init__("op", hint="; rename one of them")

    def add(self, op_def, plugin):
        super().add(op_def.name, op_def, plugin)
        op_def.plugin = plugin

    def __contains__(self, name):
        return name in self._items

    def names(self):
        return sorted(self._items)


class KernelDef:
    """One kernel: an op on a device type for some dtypes, with a priority.

    ``build(node)`` returns the compute callable for one node. Plain kernels are called as
    ``compute(*inputs)``; ``context`` kernels as ``compute(ctx, *inputs)``; ``asynchronous``
    kernels as ``compute(ctx, done, *inputs)`` and call ``done(outputs)`` or ``done(error)`` later.
    ``compute`` is the function ``build`` binds, when the kernel was made from one: registration checks
    its parameters against the op.
    """

    __slots__ = ("op_type", "device_type", "constraints", "priority", "build", "plugin",
                 "context", "asynchronous", "label", "compute")

    def __init__(self, op_type, device_type, build, constraints=None, priority=0, context=False,
                 asynchronous=False, label="", compute=None):
        self.op_type = op_type
        self.device_type = device_type
        self.build = build
        self.constraints = {k: frozenset(dtypes.as_dtype(t) for t in v) for k, v in (constraints or {}).items()}
        self.priority = priority
        self.context = context or asynchronous
        self.asynchronous = asynchronous
        self.label = label
        self.compute = compute
        self.plugin = None

    def matches(self, attrs):
        for attr, allowed in self.constraints.items():
            value = attrs.get(attr)
            if value is None:
                continue
            values = value if isinstance(value, (list, tuple)) else (value,)
            if any(dtypes.as_dtype(v) not in allowed for v in values):
                return False
        return True

    def describe(self):
        cons = "; ".join(f"{k} in [{', '.join(sorted(t.name for t in v))}]" for k, v in sorted(self.constraints.items()))
        return f"device='{self.device_type}'" + (f"; {cons}" if cons else "") + f"; priority={self.priority} ({self.plugin})"


def define_kernel(op_type, compute=None, *, build=None, device_type="CPU", dtypes=None, priority=0,  # noqa: A002
                  context=False, asynchronous=False, label=""):
    """A KernelDef from ``compute(*inputs, **bound_attrs)`` or ``build(node) -> compute`` (exactly one).

    ``dtypes`` is a list of dtypes for the attr ``T`` or a dict ``{attr: dtypes}``. ``KernelSet.add`` and
    ``Registrar.add_kernel`` both make their kernels here.
    """
    if (compute is None) == (build is None):
        raise TypeError(f"kernel for op {op_type!r}: pass exactly one of compute or build=")
    if dtypes is not None and not isinstance(dtypes, dict):
        dtypes = {"T": dtypes}
    return KernelDef(op_type, device_type, build or build_from_function(compute), dtypes, priority, context,
                     asynchronous, label, compute)


def build_from_function(fn):
    """Makes a ``build(node)`` that binds ``fn``'s keyword-only parameters once per node.

    Keyword-only parameters are filled from the node's attrs, or are ``node``, ``device``, or ``xp``
    (the device's array module: numpy on CPU, cupy on GPU), so one function can serve every device.
    """
    params = inspect.signature(fn).parameters
    bound = [p.name for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    if not bound:
        return lambda node: fn

    def build(node):
        values = {}
        for name in bound:
            if name == "node":
                values[name] = node
            elif name == "device":
                values[name] = node.device
            elif name == "xp":
                values[name] = node.device.array_module
            elif name in node.attrs:
                values[name] = node.attrs[name]
            elif params[name].default is inspect.Parameter.empty:
                raise errors.InternalError(None, None, f"kernel {fn.__qualname__} for {node.op_type} wants attr "
                                           f"{name!r}, which node {node.name!r} does not have")
        return functools.partial(fn, **values)

    return build


class KernelRegistry:
    def __init__(self, ops=None):
        self._kernels = {}
        self._ops = ops

    def add(self, kernel_def, plugin):
        """Adds a kernel, refusing a compute function whose parameters do not fit its op (when the op is known)."""
        op_def = self._ops.get(kernel_def.op_type) if self._ops is not None else None
        if op_def is not None and kernel_def.compute is not None:
            check_compute_parameters(kernel_def, op_def, plugin)
        kernel_def.plugin = plugin
        self._kernels.setdefault(kernel_def.op_type, []).append(kernel_def)

    def kernels_for(self, op_type):
        return list(self._kernels.get(op_type, ()))

    def find(self, op_type, device_type, attrs):
        """The kernel to use, by priority; None if none matches. Ties across plugins raise."""
        matching = [k for k in self._kernels.get(op_type, ()) if k.device_type == device_type and k.matches(attrs)]
        if not matching:
            return None
        best = max(k.priority for k in matching)
        top = [k for k in matching if k.priority == best]
        if len({k.plugin for k in top}) > 1:
            raise errors.InternalError(None, None, (
                f"kernels for op {op_type!r} on {device_type} tie at priority {best}: "
                + ", ".join(f"plugin {k.plugin!r}" for k in top)
                + ". Kernel choice never depends on load order; give one of them a higher priority."))
        return top[0]

    def device_types_for(self, op_type, attrs=None):
        return sorted({k.device_type for k in self._kernels.get(op_type, ()) if attrs is None or k.matches(attrs)})

    def op_types(self):
        return sorted(self._kernels)

    def remove_plugin(self, plugin):
        kept = {op: [k for k in ks if k.plugin != plugin] for op, ks in self._kernels.items()}
        self._kernels = {op: ks for op, ks in kept.items() if ks}


class DeviceType:
    """A kind of device a plugin provides. ``factory(count, config)`` makes this process's devices."""

    __slots__ = ("name", "factory", "priority", "available", "reason", "default_count", "plugin")

    def __init__(self, name, factory, priority=0, available=True, reason="", default_count=1):
        self.name = name
        self.factory = factory
        self.priority = priority
        self.available = available
        self.reason = reason
        self.default_count = default_count
        self.plugin = None


class DeviceRegistry(NamedRegistry):
    def __init__(self):
        super().__init__("device type")

    def add(self, device_type, plugin):
        super().add(device_type.name, device_type, plugin)
        device_type.plugin = plugin

    def all(self):
        """Device types, highest placement priority first."""
        return sorted(self._items.values(), key=lambda t: (-t.priority, t.name))


class GraphPass:
    __slots__ = ("name", "fn", "order", "plugin", "doc")

    def __init__(self, name, fn, order=100, doc=""):
        self.name = name
        self.fn = fn
        self.order = order
        self.doc = doc or (fn.__doc__ or "").strip().split("\n")[0]
        self.plugin = None


class Registries:
    """Everything the plugins registered, in one place."""

    def __init__(self):
        self.ops = OpRegistry()
        self.kernels = KernelRegistry(self.ops)
        self.devices = DeviceRegistry()
        self.passes = NamedRegistry("graph pass")
        self.transports = NamedRegistry("transport")
        self.api = NamedRegistry("API module")

    def remove_plugin(self, plugin):
        """Forgets everything ``plugin`` registered (a plugin that fails part-way leaves nothing behind)."""
        for registry in (self.ops, self.kernels, self.devices, self.passes, self.transports, self.api):
            registry.remove_plugin(plugin)


# The process's registries are filled by tensorweave.plugins, which sits above every layer (it loads the core's
# op families, runtime ops and passes, and the installed plugins); it installs its loader here so the layers below
# reach what was registered without importing it.
_loader = None


def install_loader(loader):
    """``loader()`` loads the plugins once and returns what loaded them: ``registries`` and ``infos`` (by name)."""
    global _loader
    _loader = loader


def _loaded():
    if _loader is None:
        raise RuntimeError("no plugin loader is installed: import tensorweave, whose plugins module installs it")
    return _loader()


def get_registries():
    """What the plugins registered: ops, kernels, device types, graph passes, transports and API names."""
    return _loaded().registries


def plugin_names():
    """The names of the loaded plugins, for messages that say what is installed."""
    return list(_loaded().infos)
