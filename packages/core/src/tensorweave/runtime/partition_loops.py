"""Carrying a while loop across devices (TF's control loops for partitions).

When a loop frame has ops on several devices, each of those devices gets a small control loop of its
own: ``Enter(const) -> Merge -> Switch(pred) -> NextIteration -> Merge``, whose predicate is the
loop's LoopCond, received from the device that computes it every iteration. The control loop starts
one iteration on its device for each iteration of the loop, and every Recv inside the frame waits on
its Merge, so the Recv runs once per iteration, including the last, where it receives the Send's
dead marker. Sends run every iteration, dead or alive, so each Recv has exactly one Send.
"""

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.framework.device_spec import short_device
from tensorweave.runtime.plan_graph import PlanNode


def add_control_loops(graph, frames, placed, recv_frames, transfer):
    """Adds control loops where frames span devices; returns {device: [new nodes]}.

    ``recv_frames`` lists (recv, frame) for every Recv inserted; ``transfer(src, slot, device)`` makes
    (or reuses) a Send/Recv pair and returns the Recv.
    """
    spans = {f: ds for f, ds in frames.devices_per_frame(placed).items() if len(ds) > 1}
    needed = {(anc, d) for f, ds in spans.items() for d in ds for anc in frames.ancestors(f)}
    if not needed:
        return {}
    new_nodes = {}
    merges = {}
    for frame, device in sorted(needed, key=lambda fd: (len(frames.ancestors(fd[0])), fd[0], fd[1])):
        parent = frames.parent.get(frame, "")
        parent_merge = merges.get((parent, device)) if parent else None
        merges[(frame, device)] = _control_loop(graph, frames, frame, device, parent_merge, transfer,
                                                new_nodes.setdefault(device, []))
    for recv, frame in recv_frames:
        if frame and (frame, recv.device) in merges:
            recv.control_inputs = [merges[(frame, recv.device)]]
    return new_nodes


def _control_loop(graph, frames, frame, device, parent_merge, transfer, out):
    loop_cond = frames.loop_cond.get(frame)
    if loop_cond is None:
        raise errors.InvalidArgumentError(None, None, (
            f"while-loop frame {frame!r} runs on several devices ({device} among them) but has no LoopCond; "
            f"build loops with tf.while_loop, or place the whole loop on one device"))
    pred = (loop_cond, 0) if loop_cond.device == device else (transfer(loop_cond, 0, device), 0)
    prefix = f"{frame.rstrip('/')}/_control_loop_{short_device(device)}"

    def node(suffix, op_type, attrs, inputs, controls=(), outputs=(dtypes.bool,)):
        n = PlanNode(graph.unique_name(f"{prefix}/{suffix}"), op_type, attrs, list(inputs), list(controls),
                     list(outputs))
        n.device = device
        out.append(graph.add(n))
        return n

    start = node("start", "Const", {"value": np.bool_(True), "dtype": dtypes.bool}, [],
                 [parent_merge] if parent_merge is not None else [])
    enter = node("enter", "Enter", {"T": dtypes.bool, "frame_name": frame, "is_constant": False,
                                    "parallel_iterations": frames.parallel_iterations.get(frame, 10)}, [(start, 0)])
    merge = node("merge", "Merge", {"T": dtypes.bool, "N": 2}, [(enter, 0), (enter, 0)],
                 outputs=(dtypes.bool, dtypes.int32))
    switch = node("switch", "Switch", {"T": dtypes.bool}, [(merge, 0), pred], outputs=(dtypes.bool, dtypes.bool))
    next_iteration = node("next_iteration", "NextIteration", {"T": dtypes.bool}, [(switch, 1)])
    merge.inputs[1] = (next_iteration, 0)
    return merge
