"""Fused optimizer update ops (ResourceApply*), applied in place on variables.

One op per optimizer step of one variable, with TF's input order and update formulas; the kernels
update the variable and its slots in place. ``use_locking`` holds the locks of every variable the op
touches for the whole update. The sparse forms take IndexedSlices' rows (duplicate rows are summed first,
as TF1's optimizers do) and touch only those rows, except Adam, whose TF1 sparse update decays the
moments of every row.
"""

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.ops.state_ops import handle_creator, handle_shape

DEFS = OpDefList()

__all__ = []

_T = "T: {float16, float32, float64, complex64, complex128}"
_REAL_T = "T: {float16, float32, float64}"

# op type -> (input names in TF's order; scalar hyperparameters are the inputs that are neither handles
# nor grad/indices), extra attrs, allowed types.
UPDATES = {
    "GradientDescent": (["var", "alpha", "delta"], [], _T),
    "Momentum": (["var", "accum", "lr", "grad", "momentum"], ["use_nesterov: bool = False"], _T),
    "Adagrad": (["var", "accum", "lr", "grad"], ["update_slots: bool = True"], _T),
    "Adam": (["var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"], [], _T),
    "RMSProp": (["var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"], [], _REAL_T),
    "CenteredRMSProp": (["var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"], [], _REAL_T),
    "Adadelta": (["var", "accum", "accum_update", "lr", "rho", "epsilon", "grad"], [], _T),
    "Ftrl": (["var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power"], [], _REAL_T),
    "FtrlV2": (["var", "accum", "linear", "grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"], [], _REAL_T),
    "ProximalAdagrad": (["var", "accum", "lr", "l1", "l2", "grad"], [], _REAL_T),
    "ProximalGradientDescent": (["var", "alpha", "l1", "l2", "delta"], [], _REAL_T),
    "AdagradDA": (["var", "gradient_accumulator", "gradient_squared_accumulator", "grad", "lr", "l1", "l2",
                   "global_step"], [], _REAL_T),
}
SLOTS = {"var", "accum", "m", "v", "ms", "mom", "mg", "accum_update", "linear", "gradient_accumulator",
         "gradient_squared_accumulator"}
INT64_INPUTS = {"global_step"}  # AdagradDA's step count, int64 whatever the variable's dtype


def sparse_inputs(inputs):
    """The sparse op's inputs: ``indices`` right after the gradient (``delta`` is called grad there)."""
    inputs = ["grad" if name == "delta" else name for name in inputs]
    at = inputs.index("grad") + 1
    return inputs[:at] + ["indices"] + inputs[at:]


def _spec(name):
    if name in SLOTS:
        return f"{name}: resource"
    if name in INT64_INPUTS:
        return f"{name}: int64"
    return "indices: Tindices" if name == "indices" else f"{name}: T"


def _check_shapes(op):
    """Scalars are scalars and the gradient fits the variable (its rows, for the sparse forms)."""
    var_shape = handle_shape(op.inputs[0])
    creator = handle_creator(op.inputs[0])
    if creator is not None and creator.get_attr("dtype") is not op.get_attr("T"):
        raise ValueError(f"{op.type}: variable {creator.name!r} holds {creator.get_attr('dtype').name}, but the "
                        f"update is in {op.get_attr('T').name}; cast the gradient and hyperparameters to the "
                        f"variable's dtype")
    names = [arg.name for arg in op.op_def.input_args]
    by_name = dict(zip(names, op.inputs))
    for name, tensor in by_name.items():
        if name in SLOTS and name != "var":
            slot_shape = handle_shape(tensor)
            if not var_shape.is_compatible_with(slot_shape):
                raise ValueError(f"{op.type}: slot {name!r} has shape {slot_shape}, but the variable has {var_shape}")
        elif name not in SLOTS and name not in ("grad", "delta", "indices") and tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{op.type}: {name} must be a scalar, got shape {tensor.shape}")
    grad = by_name.get("grad", by_name.get("delta"))
    if "indices" in by_name:
        indices = by_name["indices"].shape.with_rank(1)
        want = indices.concatenate(var_shape[1:]) if var_shape.ndims else tensor_shape.TensorShape(None)
    else:
        want = var_shape
    if not grad.shape.is_compatible_with(want):
        raise ValueError(f"{op.type}: gradient of shape {grad.shape} does not fit variable "
                         f"{creator.name if creator else '?'!r} of shape {var_shape} (expected {want})")
    return []


for _optimizer, (_inputs, _attrs, _types) in UPDATES.items():
    for _sparse in (False, True):
        _names = sparse_inputs(_inputs) if _sparse else _inputs
        DEFS.define(f"Resource{'Sparse' if _sparse else ''}Apply{_optimizer}", inputs=[_spec(n) for n in _names],
                    attrs=[_types, "use_locking: bool = False"] + _attrs + (
                        ["Tindices: {int32, int64}"] if _sparse else []),
                    is_stateful=True, grad=NOT_DIFFERENTIABLE, shape_fn=_check_shapes,
                    doc=f"One {_optimizer} step on {'the given rows of ' if _sparse else ''}a variable, in place.")


def apply(optimizer, handles, scalars, grad, indices=None, use_locking=False, name=None, **attrs):
    """Adds ``Resource[Sparse]Apply<optimizer>`` with the inputs in TF's order.

    ``handles`` and ``scalars`` map input names to tensors; ``grad`` is dense, or the values of
    IndexedSlices whose ``indices`` are given.
    """
    names = UPDATES[optimizer][0]
    values = dict(handles, **scalars)
    values["delta" if "delta" in names else "grad"] = grad
    if indices is not None:
        names = sparse_inputs(names)
        values["grad"], values["indices"] = grad, indices
    op_type = f"Resource{'Sparse' if indices is not None else ''}Apply{optimizer}"
    inputs = [values[n] for n in names]
    return apply_op(op_type, inputs, dict(attrs, use_locking=use_locking), name=name or op_type)

