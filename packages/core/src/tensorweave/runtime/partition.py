"""Splits a placed PlanGraph per device, turning each cross-device edge into a _Send/_Recv pair.

One transfer per (tensor, destination device) however many consumers it has there; control edges
cross devices as a token. A Send and its Recv share a rendezvous key made of the sending device (and
its incarnation), the receiving device, the tensor's name, and at run time the frame and iteration,
so loops and concurrent steps never mix their values; a key names devices of any task, so the same
partitions serve remote tasks. A loop whose frame spans devices gets a control loop on each of them
(``partition_loops``). Every partition keeps the order of one global topological order.
"""

from tensorweave import dtypes
from tensorweave.framework.device_spec import short_device
from tensorweave.runtime.loop_frames import LoopFrames
from tensorweave.runtime.partition_loops import add_control_loops
from tensorweave.runtime.plan_graph import PlanNode


def partition(graph, order, device_mgr, compress=""):
    """Returns {device name: [nodes in execution order]} with transfers inserted."""
    placed = list(graph.nodes)
    device_of = {id(n): n.device for n in placed}
    frames = LoopFrames(order) if any(n.role == "enter" for n in order) else None
    recvs = {}
    recv_frames = []  # (recv, frame of the value it carries)
    after = {}  # id(node) -> nodes to run right after it (its Sends)
    before = {}  # id(node) -> nodes to run right before it (its Recvs)
    floating = {}  # device -> Recvs no consumer of the global order positions (control loops')

    def transfer(src, slot, dst_device, first_consumer=None, control=False):
        key = (id(src), "ctrl" if control else slot, dst_device)
        if key in recvs:
            return recvs[key]
        src_device = device_mgr.lookup(src.device) if _is_local(src.device, device_mgr) else None
        incarnation = src_device.incarnation if src_device is not None else 0
        tensor_name = f"{src.name}:{'ctrl' if control else slot}"
        attrs = {"tensor_name": tensor_name, "send_device": src.device, "send_device_incarnation": incarnation,
                 "recv_device": dst_device}
        if control:
            token = PlanNode(graph.unique_name(f"{src.name}/_ctrl_token"), "_ControlToken", {}, [], [src],
                             [dtypes.bool])
            token.device = src.device
            graph.add(token)
            after.setdefault(id(src), []).append(token)
            value_src, dtype = (token, 0), dtypes.bool
        else:
            value_src, dtype = (src, slot), src.output_dtypes[slot]
        scheme = compress if dtype is dtypes.float32 else ""
        what = "ctrl" if control else slot
        send = PlanNode(graph.unique_name(f"{src.name}/_send_{what}_to_{short_device(dst_device)}"), "_Send",
                        dict(attrs, T=dtype, compress=scheme), [value_src], [], [])
        recv = PlanNode(graph.unique_name(f"{src.name}/_recv_{what}_on_{short_device(dst_device)}"), "_Recv",
                        dict(attrs, tensor_type=dtype, compress=scheme), [], [], [dtype],
                        [src.output_shapes[slot] if not control else None])
        send.device, recv.device = src.device, dst_device
        send.source = recv.source = src.source
        graph.add(send)
        graph.add(recv)
        after.setdefault(id(value_src[0]), []).append(send)
        if first_consumer is None:
            floating.setdefault(dst_device, []).append(recv)
        else:
            before.setdefault(id(first_consumer), []).append(recv)
        recvs[key] = recv
        if frames is not None:
            recv_frames.append((recv, frames.out_frame.get(id(src), "")))
        return recv

    for node in order:
        for pos, (src, slot) in enumerate(node.inputs):
            if device_of[id(src)] != node.device:
                node.inputs[pos] = (transfer(src, slot, node.device, node), 0)
        new_controls = []
        for c in node.control_inputs:
            if device_of[id(c)] != node.device:
                new_controls.append(transfer(c, 0, node.device, node, control=True))
            else:
                new_controls.append(c)
        node.control_inputs = new_controls

    loops = add_control_loops(graph, frames, placed, recv_frames, transfer) if frames is not None else {}
    parts = {}
    emitted = set()

    def emit(n):
        if id(n) in emitted:
            return
        for r in before.get(id(n), ()):
            emit(r)
        emitted.add(id(n))
        parts.setdefault(n.device, []).append(n)
        for s in after.get(id(n), ()):
            emit(s)

    for device, nodes in loops.items():
        for n in nodes + floating.get(device, []):
            emit(n)
    for node in order:
        emit(node)
    return parts


def _is_local(name, device_mgr):
    try:
        device_mgr.lookup(name)
        return True
    except Exception:
        return False
