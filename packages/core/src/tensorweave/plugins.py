"""Finds, loads and lists plugins. The core's own ops and passes load through the same hooks.

Plugins come from the ``tensorweave`` entry-point group. ``TENSORWEAVE_DISABLE_PLUGINS=a,b`` skips
the named ones; ``TENSORWEAVE_DISABLE_PLUGIN_AUTOLOAD=1`` loads only the core.
"""

import difflib
import importlib
import importlib.metadata
import inspect
import os
import threading
import warnings

import pluggy

from tensorweave import hookspecs
from tensorweave.framework.registry import DeviceType, GraphPass, Registries, define_kernel, install_loader

PROJECT = "tensorweave"
CORE = "tensorweave-core"
_BUILTIN_MODULES = ("tensorweave.ops.builtin_plugin", "tensorweave.runtime.builtin_plugin", "tensorweave.runtime.passes")
_HOOK_ORDER = ("tensorweave_register_ops", "tensorweave_register_kernels", "tensorweave_register_devices",
               "tensorweave_register_graph_passes", "tensorweave_register_transports", "tensorweave_register_api")


class PluginInfo:
    """What one plugin is and what it added."""

    def __init__(self, name, distribution=None, version=None, module=None):
        self.name = name
        self.distribution = distribution
        self.version = version
        self.module = module
        self.errors = []
        self.ops = []
        self.kernels = []
        self.devices = []
        self.unavailable_devices = []
        self.passes = []
        self.transports = []
        self.api = []
        self.notes = []

    @property
    def ok(self):
        return not self.errors

    def as_dict(self):
        return {k: v for k, v in vars(self).items()} | {"ok": self.ok}


class Registrar:
    """Handed to each hook; buffers what one plugin adds and commits it only if the hook succeeds."""

    def __init__(self, info):
        self._info = info
        self._pending = []

    @property
    def plugin_name(self):
        return self._info.name

    def add_op(self, op_def):
        self._pending.append(("op", op_def))

    def add_ops(self, op_defs):
        for op_def in op_defs:
            self.add_op(op_def)

    def add_kernel(self, op_type, compute=None, **kwargs):
        """Registers ``compute`` (inputs positional, attrs keyword-only) or ``build(node) -> compute``;
        the keywords are ``define_kernel``'s (``device_type="CPU"``, ``dtypes``, ``priority``, ...)."""
        self.add_kernels([define_kernel(op_type, compute, **kwargs)])

    def add_kernels(self, kernel_defs):
        for kernel in kernel_defs:
            self._pending.append(("kernel", kernel))

    def add_note(self, text):
        """A line ``tensorweave plugins`` shows under the plugin (e.g. which optional parts are on, and why not)."""
        self._pending.append(("note", text))

    def add_device_type(self, name, factory, *, priority=0, available=True, reason="", default_count=1):
        self._pending.append(("device", DeviceType(name, factory, priority, available, reason, default_count)))

    def add_pass(self, name, fn, *, order=100, doc=""):
        self._pending.append(("pass", GraphPass(name, fn, order, doc)))

    def add_transport(self, scheme, factory):
        self._pending.append(("transport", (scheme, factory)))

    def add_module(self, name, module):
        self._pending.append(("api", (name, module)))

    def _commit(self, registries):
        info = self._info
        for kind, item in self._pending:
            if kind == "op":
                registries.ops.add(item, info.name)
                info.ops.append(item.name)
            elif kind == "kernel":
                registries.kernels.add(item, info.name)
                info.kernels.append(f"{item.op_type}@{item.device_type}" + (f"[{item.label}]" if item.label else ""))
            elif kind == "device":
                registries.devices.add(item, info.name)
                (info.devices if item.available else info.unavailable_devices).append(
                    item.name if item.available else f"{item.name}: {item.reason}")
            elif kind == "pass":
                registries.passes.add(item.name, item, info.name)
                info.passes.append(item.name)
            elif kind == "note":
                info.notes.append(item)
            elif kind == "transport":
                registries.transports.add(item[0], item[1], info.name)
                info.transports.append(item[0])
            else:
                registries.api.add(item[0], item[1], info.name)
                info.api.append(item[0])


class _HookManager(pluggy.PluginManager):
    """pluggy's manager, taking every function named ``tensorweave_*`` as a hook, marked or not, so that
    ``check_pending`` refuses a misspelled one instead of leaving it silently uncalled."""

    def parse_hookimpl_opts(self, plugin, name):
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(PROJECT + "_") and inspect.isroutine(
                inspect.getattr_static(plugin, name, None)):
            opts = {}
        return opts


def _unknown_hooks_message(module, unknown):
    """Names the functions that look like hooks but are none, the closest hook to each, and the hooks."""
    named = []
    for name in unknown:
        close = difflib.get_close_matches(name, _HOOK_ORDER, n=1)
        named.append(name + (f" (did you mean {close[0]}?)" if close else ""))
    return (f"{module!r} defines {', '.join(named)}, which {'is' if len(unknown) == 1 else 'are'} not a tensorweave "
            f"hook. A function named tensorweave_* must be one of the hooks: {', '.join(_HOOK_ORDER)}; rename it, "
            f"or give a helper another name")


class PluginManager:
    """Loads the core and the installed plugins once, on first use, and keeps what they registered."""

    def __init__(self, autoload=True, extra_plugins=()):
        self.pm = _HookManager(PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.registries = Registries()
        self.infos = {}
        self._autoload = autoload and not os.environ.get("TENSORWEAVE_DISABLE_PLUGIN_AUTOLOAD")
        self._extra = list(extra_plugins)

    def load(self):
        for modname in _BUILTIN_MODULES:
            self._register(importlib.import_module(modname), CORE, _core_version())
        if self._autoload:
            disabled = {s.strip() for s in os.environ.get("TENSORWEAVE_DISABLE_PLUGINS", "").split(",") if s.strip()}
            for ep in sorted(importlib.metadata.entry_points(group=PROJECT), key=lambda e: e.name):
                if ep.name in disabled:
                    continue
                dist = getattr(ep, "dist", None)
                info = self.infos.setdefault(ep.name, PluginInfo(
                    ep.name, dist.name if dist else None, dist.version if dist else None, ep.value))
                try:
                    self._register(ep.load(), ep.name)
                except Exception as e:  # a broken plugin must not take the others down
                    self._fail(info, f"failed to load {ep.value!r}: {type(e).__name__}: {e}")
        for plugin, name in self._extra:
            self._register(plugin, name)
        for hook_name in _HOOK_ORDER:
            self._call(hook_name)
        return self

    def _register(self, plugin, name, version=None):
        info = self.infos.setdefault(name, PluginInfo(name, name if name == CORE else None, version,
                                                      getattr(plugin, "__name__", repr(plugin))))
        try:
            self.pm.register(plugin, name=f"{name}:{getattr(plugin, '__name__', id(plugin))}")
        except Exception as e:
            self._fail(info, f"invalid plugin {info.module!r}: {type(e).__name__}: {e}")
            return
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError:
            unknown = sorted(caller.name for caller in self.pm.get_hookcallers(plugin) if not caller.has_spec())
            self.pm.unregister(plugin)
            self._fail(info, _unknown_hooks_message(info.module, unknown))

    def _call(self, hook_name, plugin=None):
        """Runs one hook of every plugin (or of ``plugin`` alone), committing what each one adds on success."""
        for impl in getattr(self.pm.hook, hook_name).get_hookimpls():  # in registration order
            if plugin is not None and impl.plugin is not plugin:
                continue
            info = self.infos[impl.plugin_name.split(":", 1)[0]]
            if not info.ok:
                continue
            registrar = Registrar(info)
            try:
                impl.function(registrar=registrar)
                registrar._commit(self.registries)
            except Exception as e:
                self._fail(info, f"{hook_name} raised {type(e).__name__}: {e}")

    def _fail(self, info, message):
        info.errors.append(message)
        if info.name == CORE:
            raise RuntimeError(f"tensorweave core failed to register itself: {message}")
        self.registries.remove_plugin(info.name)  # nothing of a failed plugin stays to break the others
        for added in (info.ops, info.kernels, info.devices, info.unavailable_devices, info.passes, info.transports,
                      info.api):
            added.clear()
        warnings.warn(f"tensorweave plugin {info.name!r} is not loaded: {message}", RuntimeWarning, stacklevel=3)

    def register_plugin(self, plugin, name):
        """Registers an in-process plugin object now (notebooks, tests) and runs its hooks."""
        self._register(plugin, name)
        for hook_name in _HOOK_ORDER:
            self._call(hook_name, plugin)
        return self.infos[name]


def _core_version():
    try:
        return importlib.metadata.version(CORE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


_lock = threading.RLock()
_manager = None


def get_manager():
    global _manager
    if _manager is None:
        with _lock:
            if _manager is None:
                _manager = PluginManager().load()
    return _manager


def get_registries():
    return (_manager or get_manager()).registries


install_loader(lambda: _manager or get_manager())


def reload(autoload=True, extra_plugins=()):
    """Forgets everything registered and loads again (for tests and long-lived notebooks)."""
    global _manager
    with _lock:
        _manager = PluginManager(autoload, extra_plugins).load()
    return _manager


def register_plugin(plugin, name):
    return get_manager().register_plugin(plugin, name)


def list_plugins():
    """One PluginInfo per plugin: distribution, version, errors and what it registered."""
    return list(get_manager().infos.values())


def format_listing(verbose=False):
    lines = []
    for info in list_plugins():
        where = f"{info.distribution or '?'} {info.version or ''}".strip()
        status = "ok" if info.ok else "FAILED"
        lines.append(f"{info.name} [{where}] {status}")
        for err in info.errors:
            lines.append(f"    error: {err}")
        for note in info.notes:
            lines.append(f"    note: {note}")
        for label, items in (("ops", info.ops), ("kernels", info.kernels), ("devices", info.devices),
                             ("devices not available", info.unavailable_devices), ("graph passes", info.passes),
                             ("transports", info.transports), ("api", info.api)):
            if items:
                shown = items if verbose or len(items) <= 8 else items[:8] + [f"... {len(items) - 8} more"]
                lines.append(f"    {label} ({len(items)}): {', '.join(shown)}")
    return "\n".join(lines)
