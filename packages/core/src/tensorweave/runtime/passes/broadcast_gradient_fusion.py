"""Broadcast-gradient fusion: ``Reshape(Sum(grad, BroadcastGradientArgs(shape, Shape(grad))[0]), shape)`` becomes one
``_SumToShape(grad, shape)`` node, one kernel call instead of four.

That chain is the run-time half of every broadcasting op's gradient whose shapes are unknown while building
(``ops/broadcast_gradient_ops.py``: a batch of unknown size meets a tensor of unknown size 1); in the
lstm_sequence example's backward loop, four calls for each of 16 products made 64 of an iteration's 122. The
graph stays as built, so exported GraphDefs keep TensorFlow's ops; only the plan changes. Either output of
BroadcastGradientArgs matches (the other input then being ``Shape(grad)``). The Sum must have no other reader;
the Shape and BroadcastGradientArgs nodes stay for other readers and go when there are none. All nodes of a
chain have one device request, no colocation, and the device type they would be placed on has plain kernels for
them and one for ``_SumToShape``.
"""

from tensorweave import dtypes
from tensorweave.runtime.fused_ops import SUM_TO_SHAPE
from tensorweave.runtime.passes.rules import ReplacementPlacement, dedupe, is_pure
from tensorweave.runtime.plan_graph import PlanNode


def fuse_broadcast_gradients(graph, options):
    """Replaces each such chain by a _SumToShape node, in place; returns how many chains were fused."""
    device_mgr, registries = getattr(options, "device_mgr", None), getattr(options, "registries", None)
    if device_mgr is None or registries is None or \
            not any(n.op_type == "BroadcastGradientArgs" for n in graph.nodes):  # a plan-building cost otherwise
        return 0
    data, control = graph.consumers()
    placement = ReplacementPlacement(device_mgr, registries, SUM_TO_SHAPE, dtypes.float32)
    doomed, fused, replaced = [], [], {}
    for reshape in list(graph.nodes):  # in any order: a chain may read one fused later (see the end)
        chain = _chain(reshape, data, control, placement)
        if chain is None:
            continue
        total, arguments, grad_shape = chain
        node = replaced[id(reshape)] = _fuse(reshape, total, arguments, grad_shape)
        for reader, pos in data.get(id(reshape), ()):
            reader.inputs[pos] = (node, 0)
        for waiter in control.get(id(reshape), ()):
            waiter.control_inputs = dedupe(node if c is reshape else c for c in waiter.control_inputs)
        fused.append(node)
        doomed += [reshape, total]
        reader = total
        for helper in (arguments, grad_shape):  # each goes when the one before it was its last reader
            data[id(helper)] = [(r, p) for r, p in data[id(helper)] if r is not reader]
            if data[id(helper)] or control.get(id(helper)):
                break
            doomed.append(helper)
            reader = helper
    for node in fused:  # a fused node made before the chain it reads was fused still names that chain's Reshape
        node.inputs = [(replaced[id(src)], 0) if id(src) in replaced else (src, slot) for src, slot in node.inputs]
    if doomed:
        graph.remove(dedupe(doomed))
        for node in fused:
            graph.add(node)
    return len(fused)


def _chain(reshape, data, control, placement):
    """(Sum, BroadcastGradientArgs, Shape) if ``reshape`` ends a fusable chain, else None."""
    if reshape.op_type != "Reshape":
        return None
    (total, total_slot), (shape_src, shape_slot) = reshape.inputs
    if total.op_type != "Sum" or total.attrs.get("keep_dims") or total_slot != 0:
        return None
    (grad_src, grad_slot), (arguments, index) = total.inputs
    if arguments.op_type != "BroadcastGradientArgs":
        return None
    ours, other = arguments.inputs[index], arguments.inputs[1 - index]
    grad_shape = other[0]
    if (ours[0] is not shape_src or ours[1] != shape_slot or grad_shape.op_type != "Shape" or
            grad_shape.inputs[0][0] is not grad_src or grad_shape.inputs[0][1] != grad_slot):
        return None
    if data.get(id(total)) != [(reshape, 0)] or control.get(id(total)):
        return None
    nodes = (reshape, total, arguments, grad_shape)
    if any("_class" in n.attrs or not is_pure(n) or n.requested_device != reshape.requested_device for n in nodes):
        return None
    device_type = placement.device_type(reshape)
    if device_type is None or any(placement.device_type(n) != device_type for n in nodes[1:]):
        return None
    return total, arguments, grad_shape


def _fuse(reshape, total, arguments, grad_shape):
    """The _SumToShape node for the chain, named and sourced as its Reshape."""
    originals = (grad_shape, arguments, total, reshape)
    attrs = {"T": reshape.attrs["T"], "Tshape": reshape.attrs["Tshape"],
             "fused_names": [n.source.name if n.source is not None else n.name for n in originals]}
    return PlanNode(reshape.name, SUM_TO_SHAPE.name, attrs, [total.inputs[0], reshape.inputs[1]],
                    dedupe(c for n in originals for c in n.control_inputs), [reshape.output_dtypes[0]],
                    [reshape.output_shapes[0]], requested_device=reshape.requested_device, source=reshape.source,
                    op_def=SUM_TO_SHAPE)
