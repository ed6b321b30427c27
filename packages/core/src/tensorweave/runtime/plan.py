"""Compiling one Session.run signature into an executable plan, and running it."""

from tensorweave import errors
from tensorweave.framework.graph_io import GraphDef, NodeDef
from tensorweave.plugins import get_registries
from tensorweave.runtime.executor_dataflow import DataflowExecutor
from tensorweave.runtime.executor_linear import LinearExecutor
from tensorweave.runtime.partition import partition
from tensorweave.runtime.passes import run_passes
from tensorweave.runtime.placer import place
from tensorweave.runtime.prune import build_plan_graph


class Plan:
    """Executors for the partitions of one signature; run them for a step."""

    def __init__(self, partitions, num_fetches, graph):
        self.partitions = partitions  # list of (device, executor)
        self.num_fetches = num_fetches
        self.graph = graph

    def run(self, step, feeds, results, pool):
        if len(self.partitions) == 1:
            self.partitions[0][1].run(step, feeds, results)
            return
        futures = [pool.submit(self._run_one, ex, step, feeds, results) for _, ex in self.partitions[1:]]
        first = self._run_one(self.partitions[0][1], step, feeds, results)
        errs = [first] + [f.result() for f in futures]
        real = [e for e in errs if e is not None and not isinstance(e, errors.CancelledError)]
        if real or any(errs):
            raise (real or [e for e in errs if e is not None])[0]

    @staticmethod
    def _run_one(executor, step, feeds, results):
        try:
            executor.run(step, feeds, results)
            return None
        except Exception as e:
            step.cancel(e if isinstance(e, errors.OpError) else errors.AbortedError(None, None, str(e)))
            return e

    def cost_model_observe(self, step_stats):
        """Hook for the cost model: measured op times of a traced step (see runtime.cost_model)."""

    def partition_graph_defs(self):
        defs = []
        for device, executor in self.partitions:
            nodes = executor.nodes if hasattr(executor, "nodes") else [i.node for i in executor.items]
            defs.append(GraphDef([NodeDef(n.name, n.op_type,
                                          [f"{s.name}:{i}" for s, i in n.inputs] + [f"^{c.name}" for c in n.control_inputs],
                                          n.device, {k: v for k, v in n.attrs.items() if not callable(v)})
                                  for n in nodes]))
        return defs


def compile_plan(session, fetch_tensors, targets, feed_tensors):
    registries = get_registries()
    config = session.config
    graph, _, _ = build_plan_graph(fetch_tensors, targets, feed_tensors)
    run_passes(graph, registries, config, session.device_mgr)
    try:
        order = graph.topological_order()
    except ValueError as e:
        raise errors.InvalidArgumentError(None, None, str(e)) from None
    place(graph, session.device_mgr, registries, config, session._sticky)
    compress = "float16" if config.compress_transfers is True else (config.compress_transfers or "")
    parts = partition(graph, order, session.device_mgr, compress)
    executors = []
    for device_name, nodes in parts.items():
        device = session.device_mgr.lookup(device_name)
        executors.append((device, make_executor(nodes, device, session, registries)))
    return Plan(executors, len(fetch_tensors), graph)


def make_executor(nodes, device, session, registries):
    config = session.config
    choice = config.executor
    has_control_flow = any(n.role is not None for n in nodes)
    if choice == "dataflow" or has_control_flow or (choice is None and _wants_parallel(nodes, session)):
        return DataflowExecutor(nodes, device, session.device_mgr, registries, config,
                                num_threads=session._inter_op_threads, pool=session._pool)
    return LinearExecutor(nodes, device, session.device_mgr, registries, config)


def _wants_parallel(nodes, session):
    """Whether overlapping independent ops is worth the scheduling cost (decided by the cost model)."""
    return False
