"""Static frames of a dataflow partition (TF's ControlFlowInfo): which loop frame each node runs in.

Tensors may cross between frames only through Enter and Exit. Checking this when the plan is built
turns a fed or fetched tensor inside a loop, or a loop split across devices, into a clear error
instead of a step that hangs or computes garbage.
"""

from tensorweave import errors


def _frame_text(frame):
    return "the top level" if frame == "" else f"while-loop frame {frame!r}"


def check_frames(items):
    """Infers each node's frame (as TF's ControlFlowInfo) and refuses edges that cross frames other than
    through Enter and Exit: a tensor fed or fetched inside a loop, or a loop split across devices."""
    indegree = {id(it): 0 for it in items}
    succ = {id(it): [] for it in items}
    for it in items:
        for edges in it.out_edges:
            for dst, _ in edges:
                if not (it.role == "next_iteration" and dst.role == "merge"):
                    indegree[id(dst)] += 1
                    succ[id(it)].append(dst)
        for dst in it.control_out:
            indegree[id(dst)] += 1
            succ[id(it)].append(dst)
    in_frame, out_frame, parent = {}, {}, {}
    ready = [it for it in items if indegree[id(it)] == 0]
    while ready:
        it = ready.pop()
        frame = in_frame.setdefault(id(it), "")
        if it.role == "enter":
            known = parent.setdefault(it.frame_name, frame)
            if known != frame:
                raise errors.InvalidArgumentError(None, it.node.source, (
                    f"Enter {it.node.name!r} enters frame {it.frame_name!r} from {_frame_text(frame)}, but other "
                    f"Enters of that frame come from {_frame_text(known)}"))
            out = it.frame_name
        elif it.role == "exit":
            if frame == "":
                raise errors.InvalidArgumentError(None, it.node.source, (
                    f"Exit {it.node.name!r} is not inside a while loop"))
            out = parent[frame]
        else:
            out = frame
        out_frame[id(it)] = out
        for dst in succ[id(it)]:
            in_frame.setdefault(id(dst), out)
            indegree[id(dst)] -= 1
            if indegree[id(dst)] == 0:
                ready.append(dst)
    for it in items:
        for slot, edges in enumerate(it.out_edges):
            for dst, _ in edges:
                _check_edge(it, dst, out_frame.get(id(it)), in_frame.get(id(dst)))
        for dst in it.control_out:
            _check_edge(it, dst, out_frame.get(id(it)), in_frame.get(id(dst)))


def _check_edge(src, dst, src_frame, dst_frame):
    if src_frame is None or dst_frame is None or src_frame == dst_frame:
        return
    if src.role == "arg":
        name = src.node.source.name if src.node.source is not None else src.node.name
        message = (f"cannot feed {name!r}: it is computed inside {_frame_text(dst_frame)}, where each iteration "
                   f"has its own value; feed a tensor created outside the loop instead")
    elif dst.role == "retval":
        name = dst.node.source.name if dst.node.source is not None else dst.node.name
        message = (f"cannot fetch {name!r}: it is computed inside {_frame_text(src_frame)}, where each iteration "
                   f"has its own value; fetch the loop's output (or collect values in a TensorArray)")
    else:
        message = (f"op {dst.node.name!r} ({dst.node.op_type}) in {_frame_text(dst_frame)} takes an input from "
                   f"{src.node.name!r} ({src.node.op_type}) in {_frame_text(src_frame)}; tensors cross into and out "
                   f"of a loop only through Enter and Exit")
        if "_Recv" in (src.node.op_type, dst.node.op_type) or "_Send" in (src.node.op_type, dst.node.op_type):
            message += ". A while loop must run on one device: place its ops with one tf.device scope"
    raise errors.InvalidArgumentError(None, dst.node.source or src.node.source, message)
