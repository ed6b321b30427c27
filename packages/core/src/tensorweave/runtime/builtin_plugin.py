"""The runtime registers the ops it inserts into plans (feeds, fetches, Send/Recv, fused elementwise trees) and
their device-independent kernels through the public hooks, as ``ops/builtin_plugin.py`` does for the op families."""

from tensorweave.hookspecs import hookimpl
from tensorweave.runtime import fused_ops, internal_ops


@hookimpl
def tensorweave_register_ops(registrar):
    registrar.add_ops(internal_ops.DEFS)
    registrar.add_ops(fused_ops.DEFS)


@hookimpl
def tensorweave_register_kernels(registrar):
    internal_ops.register_kernels(registrar)
