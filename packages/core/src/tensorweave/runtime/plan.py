"""Compiling one Session.run signature into an executable plan, and running it.

prune → graph passes → place (cost model when several devices) → memory-aware order → partition →
one executor per local device: the straight-line one unless the partition has control flow or the cost
model sees enough heavy work to overlap on threads; control flow that is plain cond/while nesting runs in
the structured executor, the rest in the dataflow one.

Partitions on devices marked ``is_remote`` (another process's, from a transport's DeviceMgr) are not run
here: every process of an SPMD job compiles the same plan and runs its own partitions, so placement
and order then use the cost model's estimates only (measured times differ between processes).
"""

import gc
import logging
import threading

from tensorweave import errors
from tensorweave.framework.registry import get_registries
from tensorweave.runtime.config import CostGraphDef, FunctionGraphs
from tensorweave.runtime.cost_model import CostModel, output_bytes
from tensorweave.runtime.control_structure import NotStructured
from tensorweave.runtime.executor_dataflow import DataflowExecutor
from tensorweave.runtime.executor_linear import LinearExecutor
from tensorweave.runtime.executor_structured import StructuredExecutor
from tensorweave.runtime.kernels import find_kernel_def
from tensorweave.runtime.partition import partition
from tensorweave.runtime.passes import run_passes
from tensorweave.runtime.placer import log_transfers, place
from tensorweave.runtime.plan_graph import PlanGraph
from tensorweave.runtime.prune import build_plan_graph
from tensorweave.runtime.schedule import memory_order

PARALLEL_GAIN_SECONDS = 1e-3  # heavy work that could overlap, from which a thread pool pays for itself
DATAFLOW_NODE_SECONDS = 1.3e-6  # the dataflow executor's dispatch per node beyond the straight-line one's (measured)


class Plan:
    """Executors for the partitions of one signature; run them for a step."""

    def __init__(self, partitions, num_fetches, graph, session=None, signature=None, cost_model=None,
                 nodes_per_partition=None, graph_has_control_flow=False, remote_partitions=()):
        self.partitions = partitions  # list of (device, executor), this process's
        self.remote_partitions = list(remote_partitions)  # list of (device name, nodes) other processes run
        self.num_fetches = num_fetches
        self.graph = graph
        self._session = session
        self._signature = signature
        self._cost_model = cost_model
        self._nodes = nodes_per_partition or [getattr(ex, "nodes", None) for _, ex in partitions]
        self._has_control_flow = graph_has_control_flow
        self._function_graphs = None

    def run(self, step, feeds, results, threads):
        """Runs the first partition on this thread and the others at once on ``threads`` (``PartitionThreads``)."""
        partitions = self.partitions
        if not partitions:  # the passes folded every target away, or other processes run every partition
            return
        if len(partitions) == 1:
            error = self._run_one(partitions[0][1], step, feeds, results)  # cancels the step: processes wait on it
            if error is not None:
                raise error
            return
        futures = [threads.submit(self._run_one, ex, step, feeds, results) for _, ex in partitions[1:]]
        first = self._run_one(partitions[0][1], step, feeds, results)
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
        """Feeds a traced step's measured op times to the cost model; a partition whose measured work
        now says otherwise switches between the straight-line and the parallel executor. Later plans
        are placed with the measured times."""
        if self._cost_model is None:
            return
        self._cost_model.observe(step_stats)
        session = self._session
        if session is None or session.config.executor is not None:
            return
        changed = False
        partitions = list(self.partitions)
        for i, (device, executor) in enumerate(partitions):
            nodes = self._nodes[i]
            if nodes is None or _needs_dataflow(nodes, self._has_control_flow) or _waits_on_peers(nodes, device):
                continue
            parallel = wants_parallel(nodes, device, session, self._cost_model)
            if parallel != (executor.kind == "dataflow"):
                partitions[i] = (device, make_executor(nodes, device, session, get_registries(), self._cost_model,
                                                       self._has_control_flow, parallel))
                changed = True
        if changed:
            self.partitions = partitions

    def partition_graph_defs(self):
        local = [PlanGraph().as_graph_def(nodes if nodes is not None else [i.node for i in ex.items])
                 for nodes, (_, ex) in zip(self._nodes, self.partitions)]
        return local + [PlanGraph().as_graph_def(nodes) for _, nodes in self.remote_partitions]

    def cost_graph(self):
        """The cost model's time and output sizes for every node this process runs."""
        nodes = [(n, device) for (device, _), part in zip(self.partitions, self._nodes) for n in part or ()]
        ids = {id(n): i for i, (n, _) in enumerate(nodes)}
        model = self._cost_model
        out = []
        for i, (n, device) in enumerate(nodes):
            outputs = [{"size": model.tensor_bytes(n, s), "dtype": n.output_dtypes[s].name,
                        "shape": None if n.output_shapes[s] is None or n.output_shapes[s].as_tuple() is None
                        else list(n.output_shapes[s].as_tuple())} for s in range(n.num_outputs)]
            out.append(CostGraphDef.Node(
                n.name, device.name, i, [(ids[id(src)], slot) for src, slot in n.inputs if id(src) in ids],
                [ids[id(c)] for c in n.control_inputs if id(c) in ids], outputs,
                int(round(model.compute_seconds(n, device) * 1e6))))
        return CostGraphDef(out)

    def function_graphs(self):
        """This signature's graph before and after the graph passes, and its partitions (built on the
        first request, by pruning and optimizing again, and kept)."""
        if self._function_graphs is not None:
            return self._function_graphs
        pre = post = None
        if self._signature is not None and self._session is not None:
            pre_graph, _, _ = build_plan_graph(*self._signature)
            pre = pre_graph.as_graph_def()
            post_graph, _, _ = build_plan_graph(*self._signature)
            run_passes(post_graph, get_registries(), self._session.config, self._session.device_mgr)
            post = post_graph.as_graph_def()
        self._function_graphs = FunctionGraphs(pre, post, self.partition_graph_defs())
        return self._function_graphs


class _CollectorPaused:
    """Holds Python's cyclic garbage collector off while plans compile (in any thread), because building a
    plan makes hundreds of thousands of objects and each collection walks the whole graph again: half the time
    of a large graph's first run. Reference counting still frees as usual; cycles wait until the end."""

    def __init__(self):
        self._lock = threading.Lock()
        self._depth = 0
        self._was_enabled = False

    def __enter__(self):
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1

    def __exit__(self, *exc):
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._was_enabled:
                gc.enable()


_collector_paused = _CollectorPaused()


def compile_plan(session, fetch_tensors, targets, feed_tensors):
    with _collector_paused:
        return _compile_plan(session, fetch_tensors, targets, feed_tensors)


def _compile_plan(session, fetch_tensors, targets, feed_tensors):
    registries = get_registries()
    config = session.config
    device_mgr = session.device_mgr
    graph, _, _ = build_plan_graph(fetch_tensors, targets, feed_tensors)
    try:
        run_passes(graph, registries, config, device_mgr)
        order = graph.topological_order()
    except ValueError as e:  # a cycle not built from loops
        raise errors.InvalidArgumentError(None, None, str(e)) from None
    cost_model = getattr(session, "_cost_model", None)
    planning_model = CostModel() if getattr(session, "_remote", None) is not None else cost_model
    several = len(device_mgr.devices) > 1
    place(graph, device_mgr, registries, config, session._sticky, planning_model if several else None, order)
    order = memory_order(order, planning_model.tensor_bytes if planning_model is not None else output_bytes)
    compress = "float16" if config.compress_transfers is True else (config.compress_transfers or "")
    parts = partition(graph, order, device_mgr, compress)
    if config.log_device_placement:
        log_transfers(parts, device_mgr)
    has_control_flow = any(n.role is not None for n in order)
    executors, node_lists, remote = [], [], []
    for device_name, nodes in parts.items():
        device = device_mgr.lookup(device_name)
        if getattr(device, "is_remote", False):
            remote.append((device_name, nodes))
            continue
        executors.append((device, make_executor(nodes, device, session, registries, cost_model, has_control_flow)))
        node_lists.append(nodes)
    return Plan(executors, len(fetch_tensors), graph, session, (fetch_tensors, targets, feed_tensors), cost_model,
                node_lists, has_control_flow, remote)


def _needs_dataflow(nodes, graph_has_control_flow):
    """Control flow needs frames and dead tensors; so does a Recv that may carry a dead tensor."""
    return any(n.role is not None for n in nodes) or (
        graph_has_control_flow and any(n.op_type == "_Recv" for n in nodes))


def _waits_on_peers(nodes, device):
    """An asynchronous kernel other than the runtime's own transfers (a Recv), a collective, may wait for other
    processes: the straight-line executor would hold the ops after it until it completes, and processes that
    reach their collectives in different orders would deadlock; the dataflow executor starts it and goes on."""
    registries = get_registries()
    return any(not n.op_def.is_plumbing and n.role is None and getattr(
        find_kernel_def(registries, n, device.device_type), "asynchronous", False) for n in nodes)


def make_executor(nodes, device, session, registries, cost_model=None, graph_has_control_flow=False, parallel=None):
    config = session.config
    choice = config.executor
    if parallel is None:
        parallel = choice is None and wants_parallel(nodes, device, session, cost_model)
    structured = choice is None and not parallel and any(n.role is not None for n in nodes)
    if structured and not _waits_on_peers(nodes, device):
        try:
            return StructuredExecutor(nodes, device, session.device_mgr, registries, config)
        except NotStructured as why:  # not plain cond/while nesting, or a kernel that waits: the dataflow executor runs it
            logging.getLogger("tensorweave.runtime").debug("dataflow executor for %s: %s", device.name, why)
    if choice == "dataflow" or parallel or _needs_dataflow(nodes, graph_has_control_flow) or \
            _waits_on_peers(nodes, device):
        return DataflowExecutor(nodes, device, session.device_mgr, registries, config,
                                num_threads=session._inter_op_threads, pool=session._pool, cost_model=cost_model)
    return LinearExecutor(nodes, device, session.device_mgr, registries, config)


def wants_parallel(nodes, device, session, cost_model):
    """Whether overlapping independent ops pays for the scheduling: enough heavy work off the longest
    path (by the cost model) to pay for the thread pool and for the dataflow executor's dearer dispatch
    of every node, and more than one inter-op thread."""
    if cost_model is None or session._inter_op_threads <= 1 or len(nodes) < 3:
        return False
    return cost_model.overlap_seconds(nodes, device) >= PARALLEL_GAIN_SECONDS + len(nodes) * DATAFLOW_NODE_SECONDS
