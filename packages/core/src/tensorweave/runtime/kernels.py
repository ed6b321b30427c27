"""Choosing and instantiating kernels for placed nodes, and turning kernel failures into OpErrors.

bfloat16 is handled here, for every op at once, as TF's CPU kernels handle it: a node with bfloat16 inputs or
outputs whose kernel does not declare bfloat16 itself computes in float32 (its bfloat16 inputs widened, exactly)
and each bfloat16 output is rounded to the nearest bfloat16 once, at the end.
"""

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.framework.apply_op import get_op_def
from tensorweave.framework.registry import get_registries, plugin_names


class KernelBuildContext:
    """What ``KernelDef.build`` gets: one node's attrs, dtypes, shapes and device (read once, not per step).

    A composite kernel (one node running several ops, as a fused node does) builds its ops' own kernels
    with ``for_op(...).instantiate()`` and reports their failures with ``error``, naming the op.
    """

    __slots__ = ("name", "op_type", "attrs", "input_dtypes", "output_dtypes", "output_shapes", "device",
                 "device_mgr", "op_def", "source", "session_config", "note")

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
        self.note = ""

    def get_attr(self, name):
        return self.attrs[name]

    def for_op(self, op_type, name, attrs, input_dtypes, output_dtypes, source=None, note=""):
        """A context for another op on this device (unknown output shapes); ``note`` follows its line in errors."""
        ctx = object.__new__(KernelBuildContext)
        ctx.name, ctx.op_type, ctx.attrs = name, op_type, attrs
        ctx.input_dtypes, ctx.output_dtypes = list(input_dtypes), list(output_dtypes)
        ctx.output_shapes = [None] * len(ctx.output_dtypes)
        ctx.device, ctx.device_mgr, ctx.session_config = self.device, self.device_mgr, self.session_config
        ctx.op_def, ctx.source, ctx.note = get_op_def(op_type), source, note
        return ctx

    def instantiate(self):
        """(KernelDef, compute) of this context's op on its device, as the executors would choose it."""
        registries = get_registries()
        kernel_def = find_kernel_def(registries, self, self.device.device_type)
        if kernel_def is None:
            raise no_kernel_error(registries, self, self.device_mgr)
        return kernel_def, build_kernel(kernel_def, self)

    def widened(self):
        """This context with bfloat16 read as float32 everywhere (attrs, dtypes): the float32 kernel's view."""
        ctx = object.__new__(KernelBuildContext)
        for slot in self.__slots__:
            setattr(ctx, slot, getattr(self, slot))
        ctx.attrs = {k: _float32_for_bfloat16(v) for k, v in self.attrs.items()}
        ctx.input_dtypes = [_float32_for_bfloat16(t) for t in self.input_dtypes]
        ctx.output_dtypes = [_float32_for_bfloat16(t) for t in self.output_dtypes]
        return ctx

    def where(self):
        return (self.source.where() if self.source is not None else "<runtime>") + self.note

    def error(self, exc):
        """``exc`` as an OpError naming this op, its device and the user's line."""
        return wrap_error(self, exc)


def find_kernel_def(registries, node, device_type):
    """The best kernel for ``node`` on ``device_type``, considering wildcard ('*') kernels too."""
    kernel = registries.kernels.find(node.op_type, device_type, node.attrs)
    if kernel is None:
        kernel = registries.kernels.find(node.op_type, "*", node.attrs)
    if kernel is None and device_type == "CPU":
        widened = {k: _float32_for_bfloat16(v) for k, v in node.attrs.items()}
        if widened != node.attrs:  # a bfloat16 node runs the float32 CPU kernel (build_kernel), as TF's CPU kernels
            kernel = registries.kernels.find(node.op_type, device_type, widened)
    return kernel


def build_kernel(kernel_def, ctx):
    """``kernel_def``'s compute for the node of ``ctx``; bfloat16 nodes compute in float32 (see the module doc)."""
    if not _computes_bfloat16_in_float32(kernel_def, ctx):
        return kernel_def.build(ctx)
    compute = kernel_def.build(ctx.widened())
    outputs_bf16 = [dtype.base_dtype == dtypes.bfloat16 for dtype in ctx.output_dtypes]
    op_def = ctx.op_def
    multi = len(op_def.output_args) != 1 or op_def.output_args[0].is_list

    def in_float32(*inputs):
        out = compute(*(_widen(x) for x in inputs))
        if multi:
            return [_narrow(v) if narrow else v for v, narrow in zip(out, outputs_bf16)]
        return _narrow(out) if outputs_bf16[0] else out

    return in_float32


def _computes_bfloat16_in_float32(kernel_def, ctx):
    """A host kernel of a plain computing op, with bfloat16 among the node's dtypes but not among the kernel's."""
    op_def = ctx.op_def
    if (op_def is None or kernel_def.context or not getattr(ctx.device, "is_host", False) or op_def.is_stateful
            or op_def.is_pass_through or op_def.is_placeholder or op_def.is_plumbing or op_def.executor_role
            or op_def.outputs_borrowed):
        return False
    if any(dtypes.bfloat16 in allowed for allowed in kernel_def.constraints.values()):
        return False
    node_dtypes = list(ctx.input_dtypes) + list(ctx.output_dtypes)
    return any(dtype is not None and dtype.base_dtype == dtypes.bfloat16 for dtype in node_dtypes)


_BF16 = dtypes.bfloat16.as_numpy_dtype


def _float32_for_bfloat16(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_float32_for_bfloat16(v) for v in value)
    return dtypes.float32 if isinstance(value, dtypes.DType) and value.base_dtype == dtypes.bfloat16 else value


def _widen(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_widen(v) for v in x)
    return x.astype(np.float32) if getattr(x, "dtype", None) == _BF16 else x


def _narrow(x):
    x = np.asarray(x)
    if x.dtype == _BF16:
        return x
    return (x if x.dtype == np.float32 else x.astype(np.float32)).astype(_BF16)


def no_kernel_error(registries, node, device_mgr):
    registered = registries.kernels.kernels_for(node.op_type)
    known = "; ".join(k.describe() for k in registered) or "none"
    devices = ", ".join(device_mgr.names()) or "none (no device plugin is installed)"
    plugins = ", ".join(plugin_names())
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
        compute = build_kernel(kernel_def, KernelBuildContext(node, device, device_mgr, session_config))
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
    device = getattr(node.device, "name", node.device) or "?"
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
