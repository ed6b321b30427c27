"""Gradient accumulators: TF1's ``tf.ConditionalAccumulator`` and ``tf.SparseConditionalAccumulator``.

An accumulator is a resource in a container of its device (as a queue is), shared under ``shared_name`` by
the steps and sessions on its target. Replicas apply gradients tagged with their local step; one stamped
with a step older than the accumulator's global step is stale and dropped. ``take_grad(n)`` waits until n
gradients are in, returns their mean (or sum), resets, and advances the global step by one: the
aggregation of synchronous training (SyncReplicasOptimizer) in one op instead of a queue and a loop.
"""

from tensorweave import dtypes as dtypes_mod
from tensorweave.framework import common_shapes, graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.unary_math_ops import cast

DEFS = OpDefList()

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator", "SparseConditionalAccumulator"]

_CREATE_ATTRS = ["dtype: numeric", "shape: shape", "container: string = ''", "shared_name: string = ''",
                 "reduction_type: {'MEAN', 'SUM'} = 'MEAN'"]
_STATEFUL = {"is_stateful": True, "grad": NOT_DIFFERENTIABLE}

DEFS.define("ConditionalAccumulator", outputs=["handle: resource"], attrs=_CREATE_ATTRS,
            shape_fn=common_shapes.scalar_shape, **_STATEFUL,
            doc="Makes (or finds, under shared_name) an accumulator of dense gradients of one dtype and shape.")
DEFS.define("SparseConditionalAccumulator", outputs=["handle: resource"], attrs=_CREATE_ATTRS,
            shape_fn=common_shapes.scalar_shape, **_STATEFUL,
            doc="Makes (or finds) an accumulator of IndexedSlices gradients: only the rows applied are kept.")
DEFS.define("AccumulatorNumAccumulated", inputs=["handle: resource"], outputs=["num_accumulated: int32"],
            shape_fn=common_shapes.scalar_shape, **_STATEFUL,
            doc="How many gradients the accumulator holds now.")
DEFS.define("AccumulatorSetGlobalStep", inputs=["handle: resource", "new_global_step: int64"], **_STATEFUL,
            doc="Sets the step below which applied gradients are stale (to any value, as TF1).")
DEFS.define("AccumulatorApplyGradient", inputs=["handle: resource", "local_step: int64", "gradient: dtype"],
            attrs=["dtype: numeric"], **_STATEFUL,
            doc="Adds a gradient computed at local_step; dropped silently when local_step is stale.")
TAKE = DEFS.define("AccumulatorTakeGradient", inputs=["handle: resource", "num_required: int32"],
                   outputs=["average: dtype"], attrs=["dtype: numeric"], **_STATEFUL,
                   doc="Waits for num_required gradients, returns their mean (or sum), resets, steps the global step.")
DEFS.define("SparseAccumulatorApplyGradient",
            inputs=["handle: resource", "local_step: int64", "gradient_indices: int64", "gradient_values: dtype",
                    "gradient_shape: int64"],
            attrs=["dtype: numeric", "has_known_shape: bool"], **_STATEFUL,
            doc="Adds rows (indices, values) of a gradient computed at local_step; dropped when stale.")
SPARSE_TAKE = DEFS.define("SparseAccumulatorTakeGradient", inputs=["handle: resource", "num_required: int32"],
                          outputs=["indices: int64", "values: dtype", "shape: int64"], attrs=["dtype: numeric"],
                          **_STATEFUL,
                          doc="As AccumulatorTakeGradient for rows: each index once, its rows summed (then averaged).")


def _creator_shape(op):
    """The accumulator's declared shape, when the op making the handle is visible."""
    creator = op.inputs[0].op
    if creator.type in ("ConditionalAccumulator", "SparseConditionalAccumulator"):
        return creator.get_attr("shape")
    return tensor_shape.TensorShape(None)


@TAKE.set_shape_fn
def _take_shape(op):
    return [_creator_shape(op)]


@SPARSE_TAKE.set_shape_fn
def _sparse_take_shape(op):
    shape = _creator_shape(op)
    rows = tensor_shape.TensorShape(None) if shape.ndims is None else tensor_shape.TensorShape([None]).concatenate(
        shape[1:])
    return [tensor_shape.TensorShape([None]), rows, tensor_shape.TensorShape([shape.ndims])]


# ---- the Python classes (TF1's API) -----------------------------------------------------------------------
class ConditionalAccumulatorBase:
    """What both accumulators share: the handle, the global step and the count. TF1's base class."""

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtype
        self._shape = shape
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        return self._accumulator_ref

    @property
    def name(self):
        return self._accumulator_ref.op.name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        """The number of gradients accumulated since the last take."""
        return apply_op("AccumulatorNumAccumulated", [self._accumulator_ref],
                        name=name or f"{self._name}_NumAccumulated")

    def set_global_step(self, new_global_step, name=None):
        """Gradients with a local step below ``new_global_step`` are dropped from now on."""
        step = convert_to_tensor(new_global_step, name="new_global_step")
        if step.dtype.base_dtype != dtypes_mod.int64:
            step = cast(step, dtypes_mod.int64)
        return apply_op("AccumulatorSetGlobalStep", [self._accumulator_ref, step],
                        name=name or f"{self._name}_SetGlobalStep")

    def _local_step(self, local_step):
        step = convert_to_tensor(local_step, name="local_step")
        if step.dtype.base_dtype != dtypes_mod.int64:
            step = cast(step, dtypes_mod.int64)
        return step

    def _num_required(self, num_required):
        return convert_to_tensor(num_required, dtype=dtypes_mod.int32, name="num_required")


def _create(op_type, dtype, shape, shared_name, name, reduction_type):
    dtype = dtypes_mod.as_dtype(dtype)
    shape = tensor_shape.TensorShape(shape)
    if reduction_type not in ("MEAN", "SUM"):
        raise ValueError(f"{op_type} {name!r}: reduction_type must be 'MEAN' or 'SUM', got {reduction_type!r}")
    ref = apply_op(op_type, [], {"dtype": dtype, "shape": shape,
                                 "container": graph_mod.get_default_graph().current_container,
                                 "shared_name": shared_name or "", "reduction_type": reduction_type}, name=name)
    return dtype, shape, ref


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients of one shape; ``take_grad(n)`` hands out the mean of n of them."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        super().__init__(*_create("ConditionalAccumulator", dtype, shape, shared_name, name, reduction_type))

    def apply_grad(self, grad, local_step=0, name=None):
        """Adds ``grad`` (computed at ``local_step``); a stale one is dropped without an error."""
        grad = convert_to_tensor(grad, dtype=self._dtype, name="grad")
        if not grad.shape.is_compatible_with(self._shape):
            raise ValueError(f"apply_grad to accumulator {self.name!r}: the gradient's shape {grad.shape} is "
                             f"incompatible with the accumulator's shape {self._shape}")
        return apply_op("AccumulatorApplyGradient", [self._accumulator_ref, self._local_step(local_step), grad],
                        name=name or f"{self._name}_ApplyGradient")

    def take_grad(self, num_required, name=None):
        """Waits until ``num_required`` gradients are in; their mean, then reset and global step + 1."""
        out = apply_op("AccumulatorTakeGradient", [self._accumulator_ref, self._num_required(num_required)],
                       {"dtype": self._dtype}, name=name or f"{self._name}_TakeGradient")
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates IndexedSlices gradients row by row; the whole tensor never materializes.

    The mean divides each summed row by the number of gradients taken, so it equals the mean of the
    gradients as dense tensors (TF1's kernel divided each row by how many gradients touched it)."""

    def __init__(self, dtype, shape=None, shared_name=None, name="sparse_conditional_accumulator",
                 reduction_type="MEAN"):
        super().__init__(*_create("SparseConditionalAccumulator", dtype, shape, shared_name, name, reduction_type))

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """Adds the IndexedSlices ``grad`` (computed at ``local_step``)."""
        if not isinstance(grad, IndexedSlices):
            raise TypeError(f"apply_indexed_slices_grad to accumulator {self.name!r} takes a tf.IndexedSlices, "
                            f"got {type(grad).__name__}; use apply_grad for (indices, values)")
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step,
                               name=name or f"{self._name}_ApplyIndexedSlicesGrad")

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """Adds rows ``grad_values[i]`` at ``grad_indices[i]``; ``grad_shape``, when given, is checked."""
        values = convert_to_tensor(grad_values, dtype=self._dtype, name="grad_values")
        indices = convert_to_tensor(grad_indices, name="grad_indices")
        if indices.dtype.base_dtype != dtypes_mod.int64:
            indices = cast(indices, dtypes_mod.int64)
        if values.shape.ndims == 0:
            raise ValueError(f"apply_grad to accumulator {self.name!r}: grad_values is a scalar; it needs one row "
                             f"per index (shape [k, ...])")
        rows = self._shape[1:] if self._shape.ndims is not None else tensor_shape.TensorShape(None)
        if values.shape.ndims is not None and not values.shape[1:].is_compatible_with(rows):
            raise ValueError(f"apply_grad to accumulator {self.name!r}: rows of shape {values.shape[1:]} (values "
                             f"{values.shape}) are incompatible with the accumulator's shape {self._shape}")
        has_shape = grad_shape is not None
        shape = convert_to_tensor([] if grad_shape is None else grad_shape, dtype=None if has_shape else
                                  dtypes_mod.int64, name="grad_shape")
        if shape.dtype.base_dtype != dtypes_mod.int64:
            shape = cast(shape, dtypes_mod.int64)
        return apply_op("SparseAccumulatorApplyGradient",
                        [self._accumulator_ref, self._local_step(local_step), indices, values, shape],
                        {"has_known_shape": has_shape}, name=name or f"{self._name}_ApplyGradient")

    def take_grad(self, num_required, name=None):
        """Waits for ``num_required`` gradients; (indices, values, shape) of their mean, each index once."""
        return apply_op("SparseAccumulatorTakeGradient", [self._accumulator_ref, self._num_required(num_required)],
                        {"dtype": self._dtype}, name=name or f"{self._name}_TakeGradient")

    def take_indexed_slices_grad(self, num_required, name=None):
        """As take_grad, as a tf.IndexedSlices."""
        indices, values, shape = self.take_grad(num_required, name=name or f"{self._name}_TakeIndexedSlicesGrad")
        return IndexedSlices(values, indices, shape)
