"""Constant folding: a pure node whose inputs are all constants is computed once, when the plan is
built, with the host device's kernel, and replaced by a Const holding its value.

Outputs larger than ``OptimizerOptions.max_folded_constant_in_bytes`` are left to run each step.
Control-flow ops are never folded, so nothing folds across Switch, Merge, Enter or Exit; a folded
constant keeps the control inputs of what it replaces (inside a loop, its pivot), so it stays in its
frame and keeps its ordering. The replacement keeps the original's device request.
"""

import numpy as np

from tensorweave.framework import tensor_shape
from tensorweave.runtime.kernels import KernelBuildContext, build_kernel, find_kernel_def
from tensorweave.runtime.passes.rules import dedupe, is_pure
from tensorweave.runtime.plan_graph import PlanNode

DEFAULT_LIMIT = 10 * 1024 * 1024


def _evaluate(node, values, host, ctx):
    """The node's outputs computed on the host, or None if it cannot be folded here."""
    kernel = find_kernel_def(ctx.registries, node, host.device_type)
    if kernel is None or kernel.context:
        return None
    try:
        compute = build_kernel(kernel, KernelBuildContext(node, host, ctx.device_mgr, ctx.config))
        with np.errstate(all="ignore"):
            out = compute(*values)
    except Exception:  # leave the failure to the step, which reports it with the op's context
        return None
    if node.num_outputs == 0:
        return None
    multi = len(node.op_def.output_args) != 1 or node.op_def.output_args[0].is_list
    outs = list(out) if multi else [out]
    arrays = []
    for value, dtype in zip(outs, node.output_dtypes):
        arr = np.asarray(host.to_host(value))
        if dtype._np is not None and arr.dtype != dtype._np and arr.dtype.kind != "O":
            arr = arr.astype(dtype._np)
        arrays.append(arr)
    return arrays


def fold_constants(graph, options):
    """Folds constant sub-graphs in place; returns how many nodes were replaced by constants."""
    device_mgr = getattr(options, "device_mgr", None)
    host = device_mgr.host_device() if device_mgr is not None else None
    if host is None or getattr(options, "registries", None) is None:
        return 0
    limit = getattr(options.optimizer_options, "max_folded_constant_in_bytes", DEFAULT_LIMIT)
    values = {}  # id(node) -> output arrays, for Consts and folded nodes
    outer_controls = {}  # id(node) -> the non-constant control inputs its value depends on
    folded = []
    for node in graph.topological_order():
        if node.op_type == "Const" and not node.inputs:
            values[id(node)] = [node.attrs["value"]]
            outer_controls[id(node)] = list(node.control_inputs)
            continue
        if not node.inputs or not is_pure(node) or not all(id(s) in values for s, _ in node.inputs):
            continue
        if _static_bytes(node) > limit:  # known too big before computing it (a large tf.zeros, say)
            continue
        result = _evaluate(node, [values[id(s)][i] for s, i in node.inputs], host, options)
        if result is None or any(a.nbytes > limit for a in result):
            continue
        values[id(node)] = result
        controls = [c for s, _ in node.inputs for c in outer_controls[id(s)]]
        for c in node.control_inputs:
            controls.extend(outer_controls[id(c)] if id(c) in values else [c])
        outer_controls[id(node)] = dedupe(controls)
        folded.append(node)
    if folded:
        _replace(graph, folded, values, outer_controls)
    return len(folded)


def _static_bytes(node):
    """The outputs' size from their static shapes (unknown dimensions count as one)."""
    total = 0
    for shape, dtype in zip(node.output_shapes, node.output_dtypes):
        dims = shape.as_tuple() if shape is not None else None
        n = 1
        for d in dims or ():
            n *= d or 1
        total += n * dtype.size
    return total


def _replace(graph, folded, values, outer_controls):
    """Points every consumer outside the folded set at new Consts and drops what is left unused."""
    is_folded = {id(n) for n in folded}
    data, control = graph.consumers()
    for node in folded:
        consts = {}
        for consumer, pos in data.get(id(node), []):
            if id(consumer) in is_folded:
                continue
            slot = consumer.inputs[pos][1]
            const = consts.get(slot)
            if const is None:
                const = consts[slot] = _make_const(graph, node, slot, values[id(node)][slot],
                                                   outer_controls[id(node)])
            consumer.inputs[pos] = (const, 0)
        for waiter in control.get(id(node), []):
            if id(waiter) not in is_folded:
                waiter.control_inputs = dedupe(
                    x for c in waiter.control_inputs for x in (outer_controls[id(node)] if c is node else [c]))
    _drop_unused(graph, folded, is_folded)


def _make_const(graph, node, slot, value, controls):
    name = f"ConstantFolding/{node.name}" + (f"-{slot}" if slot else "")
    const = PlanNode(graph.unique_name(name), "Const", {"value": value, "dtype": node.output_dtypes[slot]}, [],
                     list(controls), [node.output_dtypes[slot]], [tensor_shape.TensorShape(value.shape)],
                     requested_device=node.requested_device, source=node.source)
    for key in ("_class",):
        if key in node.attrs:
            const.attrs[key] = node.attrs[key]
    return graph.add(const)


def _drop_unused(graph, candidates, is_folded):
    """Removes folded nodes, and Consts that only fed them, once nothing reads them."""
    data, control = graph.consumers()
    used = {id(n): len(data.get(id(n), ())) + len(control.get(id(n), ())) for n in graph.nodes}
    doomed = set()
    stack = [n for n in candidates if used[id(n)] == 0 and id(n) in is_folded]
    while stack:
        node = stack.pop()
        if id(node) in doomed:
            continue
        doomed.add(id(node))
        for src in [s for s, _ in node.inputs] + list(node.control_inputs):
            used[id(src)] -= 1
            if used[id(src)] == 0 and (id(src) in is_folded or src.op_type == "Const"):
                stack.append(src)
    graph.remove([n for n in graph.nodes if id(n) in doomed])
