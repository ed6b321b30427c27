"""How TensorFlow's op types and attrs map onto Tensorweave's ops and back: one entry per op that differs.

Most of TF's op types and attrs are Tensorweave's own (``MatMul``, ``ConcatV2``, ``VarHandleOp``,
``Switch``...) and need no entry. An entry says what an import does with a TF op Tensorweave lacks:
``alias`` runs it as another Tensorweave op, ``ref_update`` runs a reference-variable update as its
resource-variable form (TF1's ``VariableV2`` graphs), ``build`` adds ops by a function. ``EXPORT_DROPPED``
lists Tensorweave-only attrs TF's op of the same name does not know, left out of a GraphDef. Adding an
op is one line.
"""

from tensorweave.framework import tensor_shape

ANY = object()  # an ignored attr whatever its value


class Rule:
    """One TF op type: the Tensorweave op it becomes, attr renames, and a builder when it is not one op."""

    __slots__ = ("tf_type", "tw_type", "renames", "build", "ref_inputs")

    def __init__(self, tf_type, tw_type=None, renames=None, build=None, ref_inputs=()):
        self.tf_type = tf_type
        self.tw_type = tw_type
        self.renames = dict(renames or {})
        self.build = build
        self.ref_inputs = tuple(ref_inputs)  # inputs that are TF reference variables: a handle is passed instead


def alias(tf_type, tw_type, **renames):
    return Rule(tf_type, tw_type, renames)


def ref_update(tf_type, tw_type, ref_inputs=(0,), **renames):
    """A TF op updating reference variables in place, run as the resource op updating their handles (the
    importer adds a read after it where TF's op outputs the updated variable)."""
    return Rule(tf_type, tw_type, renames, ref_inputs=ref_inputs)


def built(tf_type, build):
    return Rule(tf_type, build=build)


def _variable_v2(ctx, node, inputs, attrs):
    """A reference variable as a resource variable: a VarHandleOp named as the node, and one read of it that
    the node's readers take (the ops updating it take the handle: ``ref_update``)."""
    handle = ctx.op("VarHandleOp", [], {"dtype": attrs["dtype"], "shape": attrs["shape"],
                                          "container": attrs.get("container", ""),
                                          "shared_name": attrs.get("shared_name") or ctx.scoped(node.name)},
                    node.name)
    ctx.ref_handles[node.name] = handle.outputs[0]
    with ctx.graph.colocate_with(handle):
        ctx.ref_values[node.name] = ctx.op("ReadVariableOp", [handle.outputs[0]], {"dtype": attrs["dtype"]},
                                           f"{node.name}/_value").outputs[0]
    return handle


def _no_op(ctx, node, inputs, attrs):
    """An op with no outputs and no effect here: a NoOp after its inputs' ops."""
    op = ctx.op("NoOp", [], {}, node.name)
    for t in inputs:
        op._add_control_input(t.op)
    return op


RULES = [
    alias("AddV2", "Add"),
    alias("ParallelDynamicStitch", "DynamicStitch"),
    alias("BatchMatMulV3", "BatchMatMulV2", Ta="T", Tb=None, Tout=None),
    built("Variable", _variable_v2),
    built("VariableV2", _variable_v2),
    built("DisableCopyOnRead", _no_op),
    ref_update("Assign", "AssignVariableOp", T="dtype", validate_shape=None, use_locking=None),
    ref_update("AssignAdd", "AssignAddVariableOp", T="dtype", use_locking=None),
    ref_update("AssignSub", "AssignSubVariableOp", T="dtype", use_locking=None),
    ref_update("ScatterUpdate", "ResourceScatterUpdate", T="dtype", use_locking=None),
    ref_update("ScatterAdd", "ResourceScatterAdd", T="dtype", use_locking=None),
    ref_update("ScatterSub", "ResourceScatterSub", T="dtype", use_locking=None),
    ref_update("ScatterMul", "ResourceScatterMul", T="dtype", use_locking=None),
    ref_update("ScatterDiv", "ResourceScatterDiv", T="dtype", use_locking=None),
    ref_update("ScatterMin", "ResourceScatterMin", T="dtype", use_locking=None),
    ref_update("ScatterMax", "ResourceScatterMax", T="dtype", use_locking=None),
    ref_update("IsVariableInitialized", "VarIsInitializedOp", dtype=None),
    ref_update("CountUpTo", "ResourceCountUpTo"),
    ref_update("ApplyGradientDescent", "ResourceApplyGradientDescent"),
    ref_update("ApplyProximalGradientDescent", "ResourceApplyProximalGradientDescent"),
    ref_update("ApplyMomentum", "ResourceApplyMomentum", (0, 1)),
    ref_update("ApplyAdagrad", "ResourceApplyAdagrad", (0, 1)),
    ref_update("ApplyProximalAdagrad", "ResourceApplyProximalAdagrad", (0, 1)),
    ref_update("ApplyAdagradDA", "ResourceApplyAdagradDA", (0, 1, 2)),
    ref_update("ApplyAdadelta", "ResourceApplyAdadelta", (0, 1, 2)),
    ref_update("ApplyAdam", "ResourceApplyAdam", (0, 1, 2)),
    ref_update("ApplyRMSProp", "ResourceApplyRMSProp", (0, 1, 2)),
    ref_update("ApplyCenteredRMSProp", "ResourceApplyCenteredRMSProp", (0, 1, 2, 3)),
    ref_update("ApplyFtrl", "ResourceApplyFtrl", (0, 1, 2)),
    ref_update("ApplyFtrlV2", "ResourceApplyFtrlV2", (0, 1, 2)),
    ref_update("SparseApplyGradientDescent", "ResourceSparseApplyGradientDescent"),
    ref_update("SparseApplyProximalGradientDescent", "ResourceSparseApplyProximalGradientDescent"),
    ref_update("SparseApplyMomentum", "ResourceSparseApplyMomentum", (0, 1)),
    ref_update("SparseApplyAdagrad", "ResourceSparseApplyAdagrad", (0, 1)),
    ref_update("SparseApplyProximalAdagrad", "ResourceSparseApplyProximalAdagrad", (0, 1)),
    ref_update("SparseApplyAdagradDA", "ResourceSparseApplyAdagradDA", (0, 1, 2)),
    ref_update("SparseApplyAdadelta", "ResourceSparseApplyAdadelta", (0, 1, 2)),
    ref_update("SparseApplyRMSProp", "ResourceSparseApplyRMSProp", (0, 1, 2)),
    ref_update("SparseApplyCenteredRMSProp", "ResourceSparseApplyCenteredRMSProp", (0, 1, 2, 3)),
    ref_update("SparseApplyFtrl", "ResourceSparseApplyFtrl", (0, 1, 2)),
    ref_update("SparseApplyFtrlV2", "ResourceSparseApplyFtrlV2", (0, 1, 2)),
]
BY_TF_TYPE = {rule.tf_type: rule for rule in RULES}

# TF attrs Tensorweave's ops do without (device hints, debugging names, values it always behaves as): dropped
# on import when they hold the value given (ANY: whatever they hold).
IGNORED_ATTRS = {
    "use_cudnn_on_gpu": ANY, "allowed_devices": ANY, "debug_name": ANY, "validate_indices": ANY,
    "_has_manual_control_dependencies": ANY, "grad_a": ANY, "grad_b": ANY, "grad_x": ANY, "grad_y": ANY,
    "Truncate": False,
    "half_pixel_centers": False, "explicit_paddings": [], "batch_dims": 0, "incompatible_shape_error": True,
    "validate_shape": False, "allow_missing_files": False,
}

# Defaults TF's OpDefs give where Tensorweave's give none: what an attr a GraphDef's writer stripped
# (strip_default_attrs) stands for when no OpList comes with it.
TF_DEFAULTS = {
    ("Placeholder", "shape"): tensor_shape.TensorShape(None),
}

# Tensorweave-only attrs of ops TF has under the same name: left out of a GraphDef, so TF reads it.
EXPORT_DROPPED = {
    "RestoreV2": ("shapes",),
}


def import_rule(tf_type):
    return BY_TF_TYPE.get(tf_type)


def exported_type(tw_type):
    """The op type a GraphDef records: Tensorweave's own (TF's names already, or Tensorweave-only ops)."""
    return tw_type


def exported_attrs(tw_type, attrs):
    dropped = EXPORT_DROPPED.get(tw_type)
    return attrs if not dropped else {k: v for k, v in attrs.items() if k not in dropped}


def is_ignored(name, value):
    if name not in IGNORED_ATTRS:
        return False
    wanted = IGNORED_ATTRS[name]
    return wanted is ANY or value == wanted


__all__ = ["RULES", "Rule", "exported_attrs", "exported_type", "import_rule", "is_ignored"]
