"""Graph passes over a PlanGraph, registered through the plugin hook like any plugin's passes."""

from tensorweave.extension import hookimpl


def run_passes(graph, registries, config, device_mgr=None):
    """Runs every enabled registered pass, by ascending order, in place."""
    options = config.graph_options
    for name, graph_pass in sorted(registries.passes.items(), key=lambda kv: (kv[1].order, kv[0])):
        if options.pass_enabled(name):
            graph_pass.fn(graph, options)
    return graph


@hookimpl
def tensorweave_register_graph_passes(registrar):
    """The core's own passes (common subexpressions, constant folding, identities) register here."""
