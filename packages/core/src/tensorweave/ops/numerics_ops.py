"""CheckNumerics and the checks built on it: check_numerics, verify_tensor_all_finite, add_check_numerics_ops.

CheckNumerics passes its input through and fails the step with InvalidArgumentError ("<message> : Tensor had NaN
values", TF1's text) when it holds NaN or Inf. It is stateful, so neither CSE nor constant folding removes the check.
Its gradient checks the incoming gradient the same way, as TF1's does.
"""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.control_flow_ops import group, with_dependencies

DEFS = OpDefList()

__all__ = ["check_numerics", "verify_tensor_all_finite", "add_check_numerics_ops"]

CHECK_NUMERICS = DEFS.define("CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
                             attrs=["T: {float16, float32, float64}", "message: string"], is_stateful=True,
                             shape_fn=common_shapes.unchanged_shape,
                             doc="tensor itself; fails the step when it holds NaN or Inf, naming message.")


@CHECK_NUMERICS.set_gradient
def _check_numerics_grad(op, grad):
    return [check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
                                 + op.get_attr("message"))]


def check_numerics(tensor, message, name=None):
    """``tensor``, checked each time it is computed: NaN or Inf fails the step with ``message`` in the error."""
    return apply_op("CheckNumerics", [tensor], {"message": message}, name=name or "CheckNumerics")


def verify_tensor_all_finite(t=None, msg=None, name=None, x=None, message=None):
    """``t`` (or ``x``), available only after a CheckNumerics of it has passed (TF1's ``VerifyFinite``)."""
    t = x if t is None else t
    msg = message if msg is None else msg
    if t is None or msg is None:
        raise TypeError("verify_tensor_all_finite needs the tensor (t= or x=) and the message (msg= or message=)")
    with graph_mod.name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="x")
        with graph_mod.colocate_with(t.op):
            checked = check_numerics(t, message=msg)
            return with_dependencies([checked.op], t)


def add_check_numerics_ops():
    """One op that checks every float16/32/64 output in the default graph built so far (TF1's debugging aid).

    The checks are chained by control edges, so a failure names the first bad tensor in building order (the
    message is that tensor's name). Graphs with tf.cond or tf.while_loop are refused, as in TF1.
    """
    graph = graph_mod.get_default_graph()
    checks = []
    for op in graph.get_operations():
        for output in op.outputs:
            if output.dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
                if op._control_flow_context is not None:
                    raise ValueError("`tf.add_check_numerics_ops() is not compatible with TensorFlow control flow "
                                     "operations such as `tf.cond()` or `tf.while_loop()`.")
                with graph.control_dependencies(checks):
                    checks = [check_numerics(output, message=f"{op.name}:{output.value_index}").op]
    return group(*checks)
