"""Choosing and instantiating kernels for placed nodes, and turning kernel failures into OpErrors."""

from tensorweave import errors


class KernelBuildContext:
    """What ``KernelDef.build`` gets: one node's attrs, dtypes, shapes and device (read once, not per step)."""

    __slots__ = ("name", "op_type", "attrs", "input_dtypes", "output_dtypes", "output_shapes", "device",
                 "device_mgr", "op_def", "source", "session_config")

    def __init__(self, node, device, device_mgr, session_config=None):
        self.name = node.name
        self.op_type = node.op_type
        self.attrs = node.attrs
        self.input_dtypes = node.input_dtypes()
        self.output_dtypes = node.output_dtypes
        self.output_shapes = node.output_shapes
        self.device = device
        self.device_mgr = device_mgr
        self.op_def = node.op_def
        self.source = node.source
        self.session_config = session_config

    def get_attr(self, name):
        return self.attrs[name]


def find_kernel_def(registries, node, device_type):
    """The best kernel for ``node`` on ``device_type``, considering wildcard ('*') kernels too."""
    kernel = registries.kernels.find(node.op_type, device_type, node.attrs)
    if kernel is None:
        kernel = registries.kernels.find(node.op_type, "*", node.attrs)
    return kernel


def no_kernel_error(registries, node, device_mgr):
    from tensorweave.plugins import list_plugins
    registered = registries.kernels.kernels_for(node.op_type)
    known = "; ".join(k.describe() for k in registered) or "none"
    devices = ", ".join(device_mgr.names()) or "none (no device plugin is installed)"
    plugins = ", ".join(p.name for p in list_plugins())
    type_attrs = {k: v.name for k, v in node.attrs.items() if hasattr(v, "as_datatype_enum")}
    hint = ("install the CPU kernels: pip install tensorweave[cpu]" if not device_mgr.devices or not registered
            else "cast the inputs to a supported dtype, or install a plugin with a kernel for it")
    return errors.NotFoundError(None, node.source, (
        f"no kernel for op {node.op_type!r} (node {node.name!r}, attrs {type_attrs}) on any available device. "
        f"Devices: {devices}. Registered kernels: {known}. Installed plugins: {plugins}. "
        f"To fix: {hint}. Op created at {node.where()}."))


def instantiate(node, device, device_mgr, registries, session_config=None):
    """Returns (KernelDef, compute callable) for a placed node."""
    kernel_def = find_kernel_def(registries, node, device.device_type)
    if kernel_def is None:
        raise no_kernel_error(registries, node, device_mgr)
    try:
        compute = kernel_def.build(KernelBuildContext(node, device, device_mgr, session_config))
    except errors.OpError as e:
        raise wrap_error(node, e) from None
    except Exception as e:
        raise wrap_error(node, e) from e
    return kernel_def, compute


_PYTHON_TO_OPERROR = {
    MemoryError: errors.ResourceExhaustedError,
    IndexError: errors.InvalidArgumentError,
    ValueError: errors.InvalidArgumentError,
    TypeError: errors.InvalidArgumentError,
    ZeroDivisionError: errors.InvalidArgumentError,
    FloatingPointError: errors.InvalidArgumentError,
    KeyError: errors.NotFoundError,
    NotImplementedError: errors.UnimplementedError,
}


def wrap_error(node, exc):
    """An OpError naming the op, its type, its device and the user's line that created it."""
    device = node.device or "?"
    where = f"in op {node.name!r} ({node.op_type}) on {device}, created at {node.where()}"
    if isinstance(exc, errors.OpError):
        if getattr(exc, "_tw_located", False):
            return exc
        cls = type(exc)
        message = f"{exc.message}\n  {where}"
    else:
        cls = next((v for k, v in _PYTHON_TO_OPERROR.items() if isinstance(exc, k)), errors.InternalError)
        message = f"{type(exc).__name__}: {exc}\n  {where}"
    err = cls(None, node.source, message)
    err._tw_located = True
    err.__cause__ = exc
    return err
