"""Ops the runtime inserts into plans: _Arg/_Retval (feeds and fetches, run by the executors
themselves) and _Send/_Recv (cross-device edges, with their kernels).

_Send and _Recv run on every device type ('*' kernels). A Send never blocks; a Recv completes when its Send's
value arrives in the step's rendezvous, converting between device memories when they differ (another device
type, or two devices not both in host memory: to_host on the sender's, from_host on the receiver's) and
decompressing 16-bit transfers.
"""

import numpy as np

from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.runtime.executor_dataflow import DEAD
from tensorweave.runtime.rendezvous import make_key

DEFS = OpDefList()

_KEY_ATTRS = ["tensor_name: string", "send_device: string", "send_device_incarnation: int",
              "recv_device: string", "compress: string = ''"]

DEFS.define("_Arg", outputs=["output: T"], attrs=["T: any", "index: int"], grad=NOT_DIFFERENTIABLE,
            is_plumbing=True, is_placeholder=True, outputs_borrowed=True,
            doc="A fed value (the executor reads it from the feeds).")
DEFS.define("_Retval", inputs=["input: T"], attrs=["T: any", "index: int"], grad=NOT_DIFFERENTIABLE, is_plumbing=True,
            doc="A fetched value (the executor stores it in the results).")
DEFS.define("_Send", inputs=["tensor: T"], attrs=["T: any"] + _KEY_ATTRS, is_stateful=True, is_plumbing=True,
            grad=NOT_DIFFERENTIABLE, doc="Hands a tensor to the rendezvous for the matching _Recv.")
DEFS.define("_Recv", outputs=["tensor: tensor_type"], attrs=["tensor_type: any"] + _KEY_ATTRS,
            is_stateful=True, is_plumbing=True, outputs_borrowed=True, grad=NOT_DIFFERENTIABLE,
            doc="Takes a tensor from the rendezvous.")
DEFS.define("_ControlToken", outputs=["token: bool"], grad=NOT_DIFFERENTIABLE, is_plumbing=True,
            doc="A placeholder value that carries a control edge across devices.")


def _key(node, ctx):
    a = node.attrs
    return make_key(a["send_device"], a["send_device_incarnation"], a["recv_device"], a["tensor_name"],
                    ctx.frame_id, ctx.iteration)


def compress(value, scheme):
    if scheme == "float16" and getattr(value, "dtype", None) == np.float32:
        return value.astype(np.float16)
    if scheme == "bfloat16" and getattr(value, "dtype", None) == np.float32:
        bits = np.ascontiguousarray(value).view(np.uint32)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    return value


def decompress(value, scheme):
    if scheme == "float16" and getattr(value, "dtype", None) == np.float16:
        return value.astype(np.float32)
    if scheme == "bfloat16" and getattr(value, "dtype", None) == np.uint16:
        return (value.astype(np.uint32) << 16).view(np.float32)
    return value


def build_send(node):
    scheme = node.attrs.get("compress", "")
    device = node.device

    def send(ctx, value):
        if value is DEAD:
            ctx.rendezvous.send(_key(node, ctx), None, True)
        else:
            ctx.rendezvous.send(_key(node, ctx), compress(device.to_host(value), scheme) if scheme else value, False)

    return send


def build_recv(node):
    scheme = node.attrs.get("compress", "")
    recv_device = node.device
    send_device = _find_device(node.device_mgr, node.attrs["send_device"])
    convert = (scheme or send_device is None or send_device.device_type != recv_device.device_type
               or (send_device is not recv_device and not (send_device.is_host and recv_device.is_host)))

    def recv(ctx, done):

        def arrived(error, value, is_dead):
            if error is not None:
                done(error)
            elif is_dead:
                done(DEAD)
            elif convert:
                done(recv_device.from_host(decompress(value, scheme) if scheme else
                                           (send_device.to_host(value) if send_device else value)))
            else:
                done(value)

        ctx.rendezvous.recv_async(_key(node, ctx), arrived)

    return recv


def _find_device(device_mgr, name):
    try:
        return device_mgr.lookup(name)
    except Exception:
        return None  # a device in another task: the transport delivers host values


def register_kernels(registrar):
    registrar.add_kernel("_Send", build=build_send, device_type="*", context=True)
    registrar.add_kernel("_Recv", build=build_recv, device_type="*", asynchronous=True)
    registrar.add_kernel("_ControlToken", lambda: np.bool_(True), device_type="*")
