"""Static frames of a dataflow partition (TF's ControlFlowInfo): which loop frame each node runs in.

Tensors may cross between frames only through Enter and Exit. Checking this when the plan is built
turns a fed or fetched tensor inside a loop, or a malformed loop, into a clear error instead of a
step that hangs or computes garbage. (A loop split across devices is fine: the partitioner gives each
device a control loop, see ``partition_loops``.)
"""

from tensorweave import errors


def _frame_text(frame):
    return "the top level" if frame == "" else f"while-loop frame {frame!r}"


def check_frames(items):
    """Infers each node's frame (as TF's ControlFlowInfo) and refuses edges that cross frames other than
    through Enter and Exit: a tensor fed or fetched inside a loop, or a loop built by hand wrongly."""
    succ = {id(it): [] for it in items}
    preds = {id(it): [] for it in items}
    for it in items:
        for dst in [dst for edges in it.out_edges for dst, _ in edges] + it.control_out:
            preds[id(dst)].append(it)
            succ[id(it)].append(dst)
    in_frame, out_frame, origin = _infer(items, succ)
    for it in items:
        frame = in_frame.get(id(it))
        if it.role == "retval" and frame:
            raise errors.InvalidArgumentError(None, it.node.source, (
                f"cannot fetch {_source_name(it)!r}: it is computed inside {_frame_text(frame)}, where each "
                f"iteration has its own value; fetch the loop's output (or collect values in a TensorArray)"))
        for src in preds[id(it)]:
            if out_frame.get(id(src)) not in (None, frame):
                _refuse(src, it, out_frame[id(src)], frame, origin)


def _infer(items, succ):
    """Frames from the inputs down, in topological order (NextIteration back edges ignored); ``origin``
    remembers which input decided each node's frame."""
    indegree = {id(it): 0 for it in items}
    for it in items:
        for dst in succ[id(it)]:
            if not (it.role == "next_iteration" and dst.role == "merge"):
                indegree[id(dst)] += 1
    in_frame, out_frame, origin, parent = {}, {}, {}, {}
    ready = [it for it in items if indegree[id(it)] == 0]
    while ready:
        it = ready.pop()
        frame = in_frame.setdefault(id(it), "")
        out = out_frame[id(it)] = _out_frame(it, frame, parent)
        for dst in succ[id(it)]:
            if it.role == "next_iteration" and dst.role == "merge":
                continue
            if id(dst) not in in_frame:
                in_frame[id(dst)], origin[id(dst)] = out, it
            indegree[id(dst)] -= 1
            if indegree[id(dst)] == 0:
                ready.append(dst)
    return in_frame, out_frame, origin


def _out_frame(it, frame, parent):
    if it.role == "enter":
        known = parent.setdefault(it.frame_name, frame)
        if known != frame:
            raise errors.InvalidArgumentError(None, it.node.source, (
                f"Enter {it.node.name!r} enters frame {it.frame_name!r} from {_frame_text(frame)}, but other "
                f"Enters of that frame come from {_frame_text(known)}"))
        return it.frame_name
    if it.role == "exit":
        if frame not in parent:
            raise errors.InvalidArgumentError(None, it.node.source, (
                f"Exit {it.node.name!r} leaves {_frame_text(frame)}, but no Enter of that frame runs on "
                f"{it.node.device or 'this device'}; check the loop's construction (or build it with tf.while_loop)"
                if frame else f"Exit {it.node.name!r} is not inside a while loop"))
        return parent[frame]
    return frame


def _source_name(item):
    return item.node.source.name if item.node.source is not None else item.node.name


def _refuse(src, dst, src_frame, dst_frame, origin):
    cause = src
    while cause is not None and cause.role not in ("arg", "enter", "exit") and cause.node.op_type != "_Recv":
        cause = origin.get(id(cause))
    if cause is not None and cause.role == "arg":  # a value fed at the top level reaches into a loop
        raise errors.InvalidArgumentError(None, cause.node.source, (
            f"cannot feed {_source_name(cause)!r}: it is computed inside {_frame_text(dst_frame or src_frame)}, "
            f"where each iteration has its own value; feed a tensor created outside the loop instead"))
    message = (f"op {dst.node.name!r} ({dst.node.op_type}) in {_frame_text(dst_frame)} takes an input from "
               f"{src.node.name!r} ({src.node.op_type}) in {_frame_text(src_frame)}; tensors cross into and out "
               f"of a loop only through Enter and Exit")
    if cause is not None and cause.node.op_type == "_Recv" or "_Send" in (src.node.op_type, dst.node.op_type):
        message += (". The edge crosses devices inside a loop built without tf.while_loop's LoopCond; place "
                    "that loop on one device with a tf.device scope")
    raise errors.InvalidArgumentError(None, dst.node.source or src.node.source, message)
