"""Graph passes over a PlanGraph, registered through the plugin hook like any plugin's passes.

A pass is ``fn(plan_graph, options)`` and rewrites the graph in place. ``options`` is a PassContext:
the session's GraphOptions (its attributes read through, ``pass_enabled(name)``) plus the config,
the devices and the registries a pass may need (constant folding runs host kernels).
``run_pass`` runs one pass alone; ``RunMetadata.function_graphs`` shows a signature's graph before and
after the passes.
"""

from tensorweave.framework.registry import get_registries
from tensorweave.hookspecs import hookimpl
from tensorweave.runtime.config import ConfigProto
from tensorweave.runtime.passes.broadcast_gradient_fusion import fuse_broadcast_gradients
from tensorweave.runtime.passes.constant_folding import fold_constants
from tensorweave.runtime.passes.cse import eliminate_common_subexpressions
from tensorweave.runtime.passes.elementwise_fusion import fuse_elementwise
from tensorweave.runtime.passes.identity_removal import remove_identities
from tensorweave.runtime.device_mgr import DeviceMgr


class PassContext:
    """What a pass gets: GraphOptions' fields, plus ``config``, ``device_mgr`` and ``registries``."""

    def __init__(self, config=None, device_mgr=None, registries=None):
        self.config = config or ConfigProto()
        self.graph_options = self.config.graph_options
        self.device_mgr = device_mgr
        self.registries = registries

    def __getattr__(self, name):
        if name == "graph_options":
            raise AttributeError(name)
        return getattr(self.graph_options, name)


def run_passes(graph, registries, config, device_mgr=None):
    """Runs every enabled registered pass, by ascending order, in place."""
    ctx = PassContext(config, device_mgr, registries)
    for name, graph_pass in sorted(registries.passes.items(), key=lambda kv: (kv[1].order, kv[0])):
        if ctx.graph_options.pass_enabled(name):
            graph_pass.fn(graph, ctx)
    return graph


def run_pass(name, graph, config=None, device_mgr=None):
    """Runs the registered pass ``name`` alone on a PlanGraph (whatever the options say); returns
    what the pass returns (the core's passes: how many nodes they changed)."""
    registries = get_registries()
    graph_pass = registries.passes.get(name)
    if graph_pass is None:
        known = ", ".join(sorted(n for n, _ in registries.passes.items()))
        raise KeyError(f"no graph pass named {name!r}; registered passes: {known}")
    if device_mgr is None:
        device_mgr = DeviceMgr(config)
    return graph_pass.fn(graph, PassContext(config, device_mgr, registries))


@hookimpl
def tensorweave_register_graph_passes(registrar):
    """The core's own passes: needless identities, common subexpressions, constant folding, broadcast-gradient and
    elementwise fusion."""
    registrar.add_pass("identity_removal", remove_identities, order=10,
                       doc="bypass identities that neither order, move nor mark anything")
    registrar.add_pass("cse", eliminate_common_subexpressions, order=20,
                       doc="merge equivalent stateless nodes")
    registrar.add_pass("constant_folding", fold_constants, order=30,
                       doc="compute stateless sub-graphs of constants once, when the plan is built")
    registrar.add_pass("broadcast_gradient_fusion", fuse_broadcast_gradients, order=80,
                       doc="run Reshape(Sum(g, BroadcastGradientArgs(shape, Shape(g))), shape) as one kernel call")
    registrar.add_pass("elementwise_fusion", fuse_elementwise, order=90,
                       doc="run trees of elementwise ops as one fused kernel call")
