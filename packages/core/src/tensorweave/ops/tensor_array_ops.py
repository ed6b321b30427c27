"""tf.TensorArray: a per-step array of tensors that loops write one element per iteration.

The array is a resource of the step; every op that changes it returns a scalar ``flow`` tensor and the
next op takes that flow as input, which orders the ops and carries the gradient: the gradient of an
array is another array (``TensorArrayGradV3``, one per ``tf.gradients`` call) where reads become
writes and writes become reads.
"""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, range_ops, shape_ops
from tensorweave.ops.control_flow_ops import with_dependencies

DEFS = OpDefList()

__all__ = ["TensorArray"]

_SCALAR = tensor_shape.TensorShape([])


def _flow_shape(op):
    return _SCALAR


CREATE = DEFS.define(
    "TensorArrayV3", inputs=["size: int32"], outputs=["handle: resource", "flow: float32"],
    attrs=["dtype: type", "element_shape: shape = None", "dynamic_size: bool = False",
           "clear_after_read: bool = True", "identical_element_shapes: bool = False",
           "tensor_array_name: string = ''"],
    is_stateful=True, grad=NOT_DIFFERENTIABLE, shape_fn=lambda op: [_SCALAR, _SCALAR],
    doc="An array of `size` tensors for this step (growing on write if dynamic_size).")
WRITE = DEFS.define("TensorArrayWriteV3", inputs=["handle: resource", "index: int32", "value: T", "flow_in: float32"],
                    outputs=["flow_out: float32"], attrs=["T: any"], is_stateful=True, shape_fn=_flow_shape,
                    doc="Writes element `index`.")
READ = DEFS.define("TensorArrayReadV3", inputs=["handle: resource", "index: int32", "flow_in: float32"],
                   outputs=["value: dtype"], attrs=["dtype: type"], is_stateful=True,
                   shape_fn=lambda op: tensor_shape.TensorShape(None), doc="Reads element `index`.")
GATHER = DEFS.define("TensorArrayGatherV3", inputs=["handle: resource", "indices: int32", "flow_in: float32"],
                     outputs=["value: dtype"], attrs=["dtype: type", "element_shape: shape = None"],
                     is_stateful=True, doc="Stacks the elements at `indices` along a new axis 0.")
SCATTER = DEFS.define("TensorArrayScatterV3",
                      inputs=["handle: resource", "indices: int32", "value: T", "flow_in: float32"],
                      outputs=["flow_out: float32"], attrs=["T: any"], is_stateful=True, shape_fn=_flow_shape,
                      doc="Writes value[i] to element indices[i].")
CONCAT = DEFS.define("TensorArrayConcatV3", inputs=["handle: resource", "flow_in: float32"],
                     outputs=["value: dtype", "lengths: int64"],
                     attrs=["dtype: type", "element_shape_except0: shape = None"], is_stateful=True,
                     doc="Concatenates all elements along axis 0, with each element's length.")
SPLIT = DEFS.define("TensorArraySplitV3",
                    inputs=["handle: resource", "value: T", "lengths: int64", "flow_in: float32"],
                    outputs=["flow_out: float32"], attrs=["T: any"], is_stateful=True, shape_fn=_flow_shape,
                    doc="Splits value along axis 0 into elements of the given lengths.")
DEFS.define("TensorArraySizeV3", inputs=["handle: resource", "flow_in: float32"], outputs=["size: int32"],
            is_stateful=True, grad=NOT_DIFFERENTIABLE, shape_fn=_flow_shape, doc="The number of elements.")
DEFS.define("TensorArrayCloseV3", inputs=["handle: resource"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Drops the elements.")
DEFS.define("TensorArrayGradV3", inputs=["handle: resource", "flow_in: float32"],
            outputs=["grad_handle: resource", "flow_out: float32"], attrs=["source: string"], is_stateful=True,
            grad=NOT_DIFFERENTIABLE, shape_fn=lambda op: [_SCALAR, _SCALAR],
            doc="The gradient array of `handle` for gradient computation `source` (created once, then shared).")


@GATHER.set_shape_fn
def _gather_shape(op):
    n = op.inputs[1].shape[0] if op.inputs[1].shape.ndims == 1 else tensor_shape.Dimension(None)
    element = op.get_attr("element_shape")
    return tensor_shape.TensorShape([n]).concatenate(element)


@CONCAT.set_shape_fn
def _concat_shape(op):
    return [tensor_shape.TensorShape([None]).concatenate(op.get_attr("element_shape_except0")),
            tensor_shape.TensorShape([None])]


class TensorArray:
    """TF1's TensorArray: ``ta = ta.write(i, x)`` returns a new TensorArray with the next flow."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._element_shape = [tensor_shape.as_shape(element_shape) if element_shape is not None
                               else tensor_shape.TensorShape(None)]
        if handle is not None:
            if flow is None:
                raise ValueError("TensorArray: pass flow= together with handle=")
            self._handle, self._flow = handle, flow
            return
        if size is None:
            raise ValueError("TensorArray needs size= (and dynamic_size=True to let it grow)")
        self._handle, self._flow = apply_op("TensorArrayV3", [convert_to_tensor(size, dtype=dtypes.int32)], {
            "dtype": self._dtype, "element_shape": self._element_shape[0], "dynamic_size": self._dynamic_size,
            "clear_after_read": True if clear_after_read is None else bool(clear_after_read),
            "identical_element_shapes": bool(infer_shape), "tensor_array_name": tensor_array_name or ""},
            name=name or "TensorArray")

    @classmethod
    def from_flow(cls, original, flow):
        """``original`` with a new flow (the same array, later in the dataflow)."""
        ta = cls.__new__(cls)
        ta.__dict__.update(original.__dict__)
        ta._flow = flow
        return ta

    @property
    def handle(self):
        return self._handle

    @property
    def flow(self):
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._element_shape[0]

    @property
    def dynamic_size(self):
        return self._dynamic_size

    def _merge_element_shape(self, shape, what):
        if not self._infer_shape:
            return
        if not shape.is_compatible_with(self._element_shape[0]):
            raise ValueError(f"TensorArray {self._handle.op.name!r}: {what} has element shape {shape}, but the "
                             f"array's elements have shape {self._element_shape[0]}")
        self._element_shape[0] = self._element_shape[0].merge_with(shape)

    def _value(self, value, what):
        value = convert_to_tensor(value, dtype=self._dtype if not hasattr(value, "dtype") else None)
        if value.dtype != self._dtype:
            raise TypeError(f"TensorArray {self._handle.op.name!r} holds {self._dtype.name}, but {what} got a "
                            f"{value.dtype.name} tensor ({value.name}); tf.cast it first")
        return value

    def identity(self):
        return TensorArray.from_flow(self, array_ops.identity(self._flow))

    def grad(self, source, flow=None, name=None):
        """The gradient array for the gradient computation named ``source``."""
        handle, grad_flow = apply_op("TensorArrayGradV3", [self._handle, self._flow if flow is None else flow],
                                     {"source": source}, name=name or "TensorArrayGrad")
        grad = TensorArray(self._dtype, handle=handle, flow=grad_flow, infer_shape=self._infer_shape)
        grad._element_shape = self._element_shape
        return grad

    def read(self, index, name=None):
        value = apply_op("TensorArrayReadV3", [self._handle, convert_to_tensor(index, dtype=dtypes.int32),
                                               self._flow], {"dtype": self._dtype}, name=name or "TensorArrayRead")
        if self._infer_shape:
            value._shape = self._element_shape[0]
        return value

    def write(self, index, value, name=None):
        value = self._value(value, "write")
        self._merge_element_shape(value.shape, "write")
        flow = apply_op("TensorArrayWriteV3", [self._handle, convert_to_tensor(index, dtype=dtypes.int32), value,
                                               self._flow], name=name or "TensorArrayWrite")
        return TensorArray.from_flow(self, flow)

    def gather(self, indices, name=None):
        element = self._element_shape[0] if self._infer_shape else tensor_shape.TensorShape(None)
        return apply_op("TensorArrayGatherV3", [self._handle, convert_to_tensor(indices, dtype=dtypes.int32),
                                                self._flow], {"dtype": self._dtype, "element_shape": element},
                        name=name or "TensorArrayGather")

    def stack(self, name=None):
        return self.gather(range_ops.range(0, self.size()), name=name or "TensorArrayStack")

    def scatter(self, indices, value, name=None):
        value = self._value(value, "scatter")
        if value.shape.ndims:
            self._merge_element_shape(value.shape[1:], "scatter")
        flow = apply_op("TensorArrayScatterV3", [self._handle, convert_to_tensor(indices, dtype=dtypes.int32),
                                                 value, self._flow], name=name or "TensorArrayScatter")
        return TensorArray.from_flow(self, flow)

    def unstack(self, value, name=None):
        """Element i becomes value[i]."""
        value = self._value(value, "unstack")
        count = shape_ops.shape(value)[0]
        return self.scatter(range_ops.range(0, count), value, name=name or "TensorArrayUnstack")

    def concat(self, name=None):
        element = self._element_shape[0]
        rest = element[1:] if self._infer_shape and element.ndims else tensor_shape.TensorShape(None)
        value, _ = apply_op("TensorArrayConcatV3", [self._handle, self._flow],
                            {"dtype": self._dtype, "element_shape_except0": rest}, name=name or "TensorArrayConcat")
        return value

    def split(self, value, lengths, name=None):
        value = self._value(value, "split")
        if value.shape.ndims:
            self._merge_element_shape(tensor_shape.TensorShape([None]).concatenate(value.shape[1:]), "split")
        flow = apply_op("TensorArraySplitV3", [self._handle, value, convert_to_tensor(lengths, dtype=dtypes.int64),
                                               self._flow], name=name or "TensorArraySplit")
        return TensorArray.from_flow(self, flow)

    def size(self, name=None):
        return apply_op("TensorArraySizeV3", [self._handle, self._flow], name=name or "TensorArraySize")

    def close(self, name=None):
        return apply_op("TensorArrayCloseV3", [self._handle], name=name or "TensorArrayClose")

    def __repr__(self):
        return f"<tf.TensorArray {self._handle.op.name!r} dtype={self._dtype.name} element_shape={self.element_shape}>"


# ---- gradients: reads become writes of the gradient array, writes become reads ------------------------
def grad_source(graph):
    """Which tf.gradients call is building: the name scope up to its last 'gradients*' component.
    Each call gets its own gradient arrays, so two gradient computations never mix."""
    parts = graph.get_name_scope().split("/")
    positions = [i for i, p in enumerate(parts) if p.startswith("gradients")]
    if not positions:
        raise ValueError(f"TensorArray gradients are built by tf.gradients (in a 'gradients' name scope); the "
                         f"current scope is {graph.get_name_scope()!r}")
    return "/".join(parts[:positions[-1] + 1])


def _grad_array(op, flow):
    array = TensorArray(op.get_attr("dtype") if "dtype" in op.attrs else op.get_attr("T"),
                        handle=op.inputs[0], flow=flow)
    return array.grad(grad_source(op.graph), flow=flow)


def _after_forward(op, flow_grad):
    """The flow gradient, ordered after the forward op (so the gradient array sees its final size)."""
    return with_dependencies([array_ops.identity(op.outputs[0], name="flow_out").op], flow_grad,
                             name="write_barrier")


@READ.set_gradient
def _read_grad(op, grad):
    flow = op.inputs[2]
    return [None, None, _grad_array(op, flow).write(op.inputs[1], grad).flow]


@WRITE.set_gradient
def _write_grad(op, flow_grad):
    flow = _after_forward(op, flow_grad)
    return [None, None, _grad_array(op, flow).read(op.inputs[1]), flow]


@GATHER.set_gradient
def _gather_grad(op, grad):
    flow = op.inputs[2]
    return [None, None, _grad_array(op, flow).scatter(op.inputs[1], grad).flow]


@SCATTER.set_gradient
def _scatter_grad(op, flow_grad):
    flow = _after_forward(op, flow_grad)
    return [None, None, _grad_array(op, flow).gather(op.inputs[1]), flow]


@CONCAT.set_gradient
def _concat_grad(op, grad, _):
    flow = op.inputs[1]
    return [None, _grad_array(op, flow).split(grad, op.outputs[1]).flow]


@SPLIT.set_gradient
def _split_grad(op, flow_grad):
    flow = _after_forward(op, flow_grad)
    return [None, _grad_array(op, flow).concat(), None, flow]
