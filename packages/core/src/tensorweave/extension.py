"""The public extension API: everything a plugin imports to add ops, kernels, devices, passes and transports.

A minimal plugin module::

    from tensorweave.extension import OpDefList, KernelSet
    from tensorweave.hookspecs import hookimpl

    OPS = OpDefList()
    SQUARE_PLUS = OPS.define("SquarePlus", inputs=["x: T"], outputs=["y: T"], attrs=["T: floating"],
                             shape_fn=common_shapes.unchanged_shape)

    KERNELS = KernelSet(device_type="CPU")

    @KERNELS.register("SquarePlus", dtypes=[float32, float64])
    def _square_plus(x):
        return x * x + 1

    @hookimpl
    def tensorweave_register_ops(registrar):
        registrar.add_ops(OPS)

    @hookimpl
    def tensorweave_register_kernels(registrar):
        registrar.add_kernels(KERNELS)
"""

from tensorweave import dtypes, errors  # noqa: F401 - re-exported for plugins
from tensorweave.framework import common_shapes, flops  # noqa: F401
from tensorweave.framework.apply_op import apply_op, create_op  # noqa: F401
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, AttrDef, OpDef, OpDefList  # noqa: F401
from tensorweave.framework.registry import KernelDef, define_kernel  # noqa: F401
from tensorweave.framework.tensor_shape import Dimension, TensorShape  # noqa: F401
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape  # noqa: F401
from tensorweave.hookspecs import hookimpl  # noqa: F401


class KernelSet(list):
    """Kernels of one module for one device type, handed to ``registrar.add_kernels`` in one call."""

    def __init__(self, device_type="CPU", priority=0):
        super().__init__()
        self.device_type = device_type
        self.priority = priority

    def add(self, op_type, compute=None, *, device_type=None, priority=None, **kwargs):
        """Adds ``compute(*inputs, **bound_attrs)`` or ``build(node) -> compute`` for ``op_type`` (see
        ``define_kernel``); the set's device type and priority unless given."""
        kernel = define_kernel(op_type, compute, device_type=device_type or self.device_type,
                               priority=self.priority if priority is None else priority, **kwargs)
        self.append(kernel)
        return kernel

    def register(self, op_type, **kwargs):
        """Decorator form of ``add`` for a compute function."""
        def decorator(fn):
            self.add(op_type, fn, **kwargs)
            return fn
        return decorator

    def register_build(self, op_type, **kwargs):
        """Decorator form of ``add`` for a ``build(node) -> compute`` function."""
        def decorator(fn):
            self.add(op_type, build=fn, **kwargs)
            return fn
        return decorator


# The core's rules that a kernel must apply exactly as the op's shape function does, so that errors at run
# time read as the ones while building (reshape sizes, axes, windows, slicing masks, optimizer slots).
_KERNEL_RULES = {
    "tensorweave.ops.broadcast_gradient_ops": ["broadcast_reduction_axes"],
    "tensorweave.ops.shape_ops": ["broadcast_shape_values", "check_reshape_target", "expand_axis", "squeeze_axes"],
    "tensorweave.ops.range_ops": ["range_size"],
    "tensorweave.ops.window_geometry": ["pool_paddings", "spatial_paddings", "spatial_params",
                                        "window_geometry"],
    "tensorweave.ops.training_ops": ["SLOTS", "UPDATES", "sparse_inputs"],
    "tensorweave.ops.slice_spec": ["MASKS", "dense_key", "sliced_dims"],
    "tensorweave.ops.nn_ops": ["SELU_ALPHA", "SELU_SCALE", "bias_channel_axis"],
}


def __getattr__(name):
    # Runtime classes load lazily so importing the extension API stays cheap.
    lazy = {
        "Device": ("tensorweave.runtime.device", "Device"),
        "DeviceContext": ("tensorweave.runtime.device", "DeviceContext"),
        "Resource": ("tensorweave.runtime.resources", "Resource"),
        "ResourceHandle": ("tensorweave.runtime.resources", "ResourceHandle"),
        "OpContext": ("tensorweave.runtime.step", "OpContext"),
        "PlanGraph": ("tensorweave.runtime.plan_graph", "PlanGraph"),
        "PlanNode": ("tensorweave.runtime.plan_graph", "PlanNode"),
        "register_plugin": ("tensorweave.plugins", "register_plugin"),
        "DEAD": ("tensorweave.runtime.executor_dataflow", "DEAD"),
        "DEFAULT_CONTAINER": ("tensorweave.runtime.resources", "DEFAULT_CONTAINER"),
        "checkpoint_format": ("tensorweave.formats.checkpoint_format", None),
        "FunctionRunner": ("tensorweave.runtime.function_runner", "FunctionRunner"),
        "example_protos": ("tensorweave.protos.example", None),
        "framework_protos": ("tensorweave.protos.framework", None),
        "tensor_protos": ("tensorweave.framework.tensor_proto", None),
        "summary_protos": ("tensorweave.protos.summary", None),
        "records": ("tensorweave.records", None),
        "call_py_func": ("tensorweave.ops.script_ops", "call_py_func"),
        "record_format": ("tensorweave.records.format", None),
    }
    lazy.update({rule: (module, rule) for module, rules in _KERNEL_RULES.items() for rule in rules})
    if name in lazy:
        import importlib
        module, attr = lazy[name]
        module = importlib.import_module(module)
        return module if attr is None else getattr(module, attr)
    raise AttributeError(f"module 'tensorweave.extension' has no attribute {name!r}")
