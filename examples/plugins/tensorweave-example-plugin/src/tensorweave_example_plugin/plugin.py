"""The plugin module named by the entry point: op definitions, kernels and a device type.

Each op says on its definition what the runtime may do with it, exactly as the core's ops do: Swish and SwishGrad
are elementwise (the fusion pass fuses them with the core's elementwise ops), Annotate hands its input on
(identity removal bypasses it), and both see through known values (``constant_fn``: shape inference folds them).
"""

import numpy as np

from tensorweave.extension import Device, KernelSet, OpDefList, apply_op, common_shapes, constant_value
from tensorweave.hookspecs import hookimpl

OPS = OpDefList()

SWISH = OPS.define("Swish", inputs=["x: T"], outputs=["y: T"], attrs=["T: {float16, float32, float64}"],
                   shape_fn=common_shapes.unchanged_shape, is_elementwise=True, doc="y = x * sigmoid(x)")
SWISH_GRAD = OPS.define("SwishGrad", inputs=["x: T", "dy: T"], outputs=["dx: T"],
                        attrs=["T: {float16, float32, float64}"], shape_fn=common_shapes.unchanged_shape,
                        is_elementwise=True, doc="dx = dy * d(swish)/dx")
ANNOTATE = OPS.define("Annotate", inputs=["input: T"], outputs=["output: T"], attrs=["T: any", "note: string = ''"],
                      shape_fn=common_shapes.unchanged_shape, is_pass_through=True,
                      doc="Returns its input; its note is a remark for tools that read the graph")


@SWISH.set_gradient
def _swish_grad(op, grad):
    return [apply_op("SwishGrad", [op.inputs[0], grad])]


@SWISH.set_constant_fn
def _swish_value(op, index):
    x = constant_value(op.inputs[0])
    return None if x is None else swish_kernel(x)


ANNOTATE.set_gradient(lambda op, grad: [grad])
ANNOTATE.set_constant_fn(lambda op, index: constant_value(op.inputs[0]))


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def swish_kernel(x):
    return (x * _sigmoid(x)).astype(x.dtype, copy=False)


def swish_grad_kernel(x, dy):
    s = _sigmoid(x)
    return (dy * (s + x * s * (1 - s))).astype(x.dtype, copy=False)


FLOATS = ["float16", "float32", "float64"]

CPU_KERNELS = KernelSet("CPU")
CPU_KERNELS.add("Swish", swish_kernel, dtypes=FLOATS)
CPU_KERNELS.add("SwishGrad", swish_grad_kernel, dtypes=FLOATS)
CPU_KERNELS.add("Annotate", lambda x: x)


class ToyDevice(Device):
    """A device with its own memory: values move in and out by copy, and the copies are counted."""

    is_host = False

    def __init__(self, name, index):
        super().__init__(name, "TOY", index, description="example plugin device (numpy, separate memory)")
        self.copies_in = 0
        self.copies_out = 0

    def from_host(self, value):
        self.copies_in += 1
        return np.array(value, copy=True)

    def to_host(self, value):
        self.copies_out += 1
        return np.array(value, copy=True)


TOY_KERNELS = KernelSet("TOY")
TOY_KERNELS.add("Swish", swish_kernel, dtypes=FLOATS)
TOY_KERNELS.add("SwishGrad", swish_grad_kernel, dtypes=FLOATS)
TOY_KERNELS.add("Add", np.add, dtypes=FLOATS)
TOY_KERNELS.add("Identity", lambda x: x)


@TOY_KERNELS.register_build("Const")
def _toy_const(node):
    value = node.attrs["value"]
    return lambda: value


@hookimpl
def tensorweave_register_ops(registrar):
    registrar.add_ops(OPS)


@hookimpl
def tensorweave_register_kernels(registrar):
    registrar.add_kernels(CPU_KERNELS)
    registrar.add_kernels(TOY_KERNELS)


@hookimpl
def tensorweave_register_devices(registrar):
    # A lower priority than CPU: ops go to TOY only when asked to.
    registrar.add_device_type("TOY", lambda count, ctx: [ToyDevice(ctx.device_name("TOY", i), i)
                                                         for i in range(count)], priority=-10)
