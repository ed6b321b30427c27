"""Session: runs (parts of) a graph. Each (fetches, feeds) signature is compiled once into a plan:
prune → graph passes → place → partition → one executor per device; later calls reuse it."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.default_session import default_session
from tensorweave.framework.operation import Operation
from tensorweave.framework.registry import get_registries
from tensorweave.framework.tensor_conversion import feed_conversion, fetch_conversion
from tensorweave.framework.tensor import Tensor
from tensorweave.runtime import device_mgr as device_mgr_mod
from tensorweave.runtime.config import ConfigProto, RunOptions
from tensorweave.runtime.cost_model import CostModel
from tensorweave.runtime.feed_conversion import convert_feed, flat_feed_items
from tensorweave.runtime.fetches import FetchPlan
from tensorweave.runtime.partition_threads import PartitionThreads
from tensorweave.runtime.plan import compile_plan
from tensorweave.runtime.rendezvous import LocalRendezvous
from tensorweave.runtime.step import StepState
from tensorweave.runtime.tracing import StepStatsCollector

LOCAL_SCHEME = "local://"


class BaseSession:
    def __init__(self, target="", graph=None, config=None):
        self._graph = graph or graph_mod.get_default_graph()
        self._config = config or ConfigProto()
        self._target = target or ""
        self._closed = False
        self._lock = threading.Lock()
        self._plans = {}
        self._sticky = {}
        self._cost_model = CostModel()  # estimates, then measured times of traced steps
        self._active_steps = set()
        self._remote = None
        if self._target and not self._target.startswith(LOCAL_SCHEME):
            self._remote = _remote_master(self._target, self._config)
            self._device_mgr = self._remote.device_mgr
        elif self._target:
            self._device_mgr = device_mgr_mod.shared_device_mgr(self._target, self._config)
        else:
            self._device_mgr = device_mgr_mod.DeviceMgr(self._config)
        threads = self._config.inter_op_parallelism_threads or 2
        # the dataflow executors' helper threads: optional extra hands, which a step never waits to start
        self._pool = ThreadPoolExecutor(max_workers=max(threads, 2) * 2, thread_name_prefix="tensorweave-step")
        self._partition_threads = PartitionThreads()  # never queues: a step's partitions wait on each other
        self._inter_op_threads = threads

    # ---- properties ----------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    @property
    def config(self):
        return self._config

    @property
    def device_mgr(self):
        return self._device_mgr

    def list_devices(self):
        return list(self._device_mgr.devices)

    # ---- running -------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops needed for ``fetches``, with ``feed_dict`` replacing tensors' values."""
        if self._closed:
            raise RuntimeError("attempted to use a closed Session")
        fetch_plan = FetchPlan(self._graph, fetches)
        feed_tensors, feed_values = self._process_feeds(feed_dict)
        plan = self._get_plan(fetch_plan.tensors, fetch_plan.targets, feed_tensors)
        values = self._execute(plan, feed_values, options, run_metadata)
        return fetch_plan.build(values)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """A function taking the feeds in ``feed_list`` order and returning the fetches (no re-analysis)."""
        fetch_plan = FetchPlan(self._graph, fetches)
        keys = [(k, feed_conversion(k)) for k in (feed_list or [])]
        feed_tensors = [self._feed_key(t) for k, split in keys
                        for t in ([k] if split is None else fetch_conversion(k)[0](k))]
        plan = self._get_plan(fetch_plan.tensors, fetch_plan.targets, feed_tensors)
        checks = [_feed_checker(t) for t in feed_tensors]

        def run_callable(*args, options=None, run_metadata=None):
            if len(args) != len(keys):
                raise TypeError(f"this callable takes {len(keys)} feed values, got {len(args)}")
            values = [part for (k, split), v in zip(keys, args)
                      for part in ([v] if split is None else [value for _, value in split(k, v)])]
            feeds = [check(v) for check, v in zip(checks, values)]
            return fetch_plan.build(self._execute(plan, feeds, options, run_metadata))

        return run_callable

    def _feed_key(self, key):
        if hasattr(key, "_as_graph_element") and not isinstance(key, (Tensor, Operation)):
            key = key._as_graph_element()
        try:
            t = self._graph.as_graph_element(key, allow_operation=False)
        except (TypeError, ValueError, KeyError) as e:
            raise TypeError(f"cannot interpret feed_dict key {key!r} as a Tensor: {e}") from None
        return t

    def _process_feeds(self, feed_dict):
        if not feed_dict:
            return (), []
        tensors, values = [], []
        for key, value in _expand_feeds(flat_feed_items(feed_dict)):
            t = self._feed_key(key)
            if isinstance(value, (Tensor, Operation)):
                raise TypeError(f"the value of a feed cannot be a tf.Tensor (feeding {t.name} with {value.name}); "
                                f"acceptable feed values are numpy arrays, Python scalars, lists and strings")
            tensors.append(t)
            values.append(convert_feed(t, value))
        return tuple(tensors), values

    def _get_plan(self, fetch_tensors, targets, feed_tensors):
        key = (tuple(fetch_tensors), tuple(targets), tuple(feed_tensors))
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = compile_plan(self, fetch_tensors, targets, feed_tensors)
                    self._plans[key] = plan
        return plan

    def _execute(self, plan, feeds, options, run_metadata):
        tracing = options is not None and options.trace_level >= RunOptions.SOFTWARE_TRACE
        stats = StepStatsCollector() if tracing and run_metadata is not None else None
        step = StepState(self._remote.rendezvous(plan) if self._remote else LocalRendezvous(), options, stats, self)
        timeout_ms, setting = (options.timeout_in_ms if options is not None else 0), "RunOptions.timeout_in_ms"
        if not timeout_ms or timeout_ms < 0:  # as TF: a run's zero or negative timeout leaves the session's
            timeout_ms, setting = self._config.operation_timeout_in_ms, "ConfigProto.operation_timeout_in_ms"
        timer = None
        if timeout_ms and timeout_ms > 0:
            timer = threading.Timer(timeout_ms / 1000.0, step.cancel, (errors.DeadlineExceededError(
                None, None, f"Session.run exceeded its deadline of {timeout_ms} ms (set by {setting})"),))
            timer.daemon = True
            timer.start()
        step.thread_id = threading.get_ident()
        with self._lock:
            if self._closed:
                raise errors.CancelledError(None, None, "the Session was closed")
            self._active_steps.add(step)
        results = [None] * plan.num_fetches
        try:
            plan.run(step, feeds, results, self._partition_threads)
            step.rendezvous.finish()
        finally:
            if timer is not None:
                timer.cancel()
            with self._lock:
                self._active_steps.discard(step)
        for i, v in enumerate(results):
            if type(v) is np.ndarray and v.ndim == 0:
                results[i] = v[()]  # rank-0 fetches come back as numpy scalars, as in TF
        if run_metadata is not None:
            run_metadata.Clear()  # each run's metadata replaces the last, as TF's ParseFromString
        if stats is not None:
            stats.fill(run_metadata.step_stats)
            plan.cost_model_observe(run_metadata.step_stats)
            wanted = self._config.graph_options.build_cost_model
            if wanted and self._cost_model.steps_observed >= wanted:
                run_metadata.cost_graph = plan.cost_graph()
        if run_metadata is not None and options is not None and (
                options.output_partition_graphs or options.trace_level >= RunOptions.FULL_TRACE):
            graphs = plan.function_graphs()
            run_metadata.partition_graphs.extend(graphs.partition_graphs)
            run_metadata.function_graphs.append(graphs)
        return results

    # ---- lifecycle ---------------------------------------------------------------------------
    def close(self):
        """Closes the session; running steps are cancelled (CancelledError) instead of hanging."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            active = list(self._active_steps)
        error = errors.CancelledError(None, None, "the Session was closed while this step was running")
        for step in active:
            step.cancel(error)
        if not self._target:
            self._device_mgr.close()
        elif self._remote is not None and hasattr(self._remote, "close"):
            self._remote.close()  # TF's CloseSession: the other tasks drop what they kept for this session
        self._pool.shutdown(wait=False)
        self._partition_threads.shutdown()

    def _cancel_steps_of_threads(self, thread_ids, error):
        """Cancels the running steps that ``thread_ids`` started (a stopping queue runner's threads)."""
        with self._lock:
            steps = [s for s in self._active_steps if s.thread_id in thread_ids]
        for step in steps:
            step.cancel(error)

    def __enter__(self):
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()
        self._graph_ctx = self._graph.as_default()
        self._graph_ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._graph_ctx.__exit__(exc_type, exc, tb)
        self._default_ctx.__exit__(exc_type, exc, tb)
        self.close()
        return False

    def as_default(self):
        """A ``with`` block in which this is the default session."""
        return default_session(self)

    def __del__(self):
        try:
            if not self._closed:
                self.close()
        except Exception:
            pass


class Session(BaseSession):
    """TF1's ``tf.Session(target='', graph=None, config=None)``.

    ``target=''`` gives the session its own devices (state ends with the session); a
    ``local://<name>`` target or a Server's target shares devices and containers with every session
    on it, for the life of the process.
    """

    @staticmethod
    def reset(target, containers=None, config=None):
        """Clears the named containers (all of them if None) on ``target``'s devices."""
        device_mgr_mod.reset_target(target, containers)


class InteractiveSession(Session):
    """A Session that makes itself the default on creation, for shells and notebooks."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._ctx = self.as_default()
        self._ctx.__enter__()
        self._graph_ctx_i = self._graph.as_default()
        self._graph_ctx_i.__enter__()

    def close(self):
        if not self._closed:
            try:
                self._graph_ctx_i.__exit__(None, None, None)
                self._ctx.__exit__(None, None, None)
            except (ValueError, IndexError):
                pass
        super().close()


def _remote_master(target, config):
    """The transport's master for ``target``: it has ``device_mgr`` (devices of every task; other
    processes' devices say ``is_remote``) and ``rendezvous(plan)``, a rendezvous for one step of
    ``plan`` (``plan._signature`` is (fetches, targets, feeds)). Each process runs its own partitions; the
    step ends with the rendezvous's ``finish()``, where a master waits for the partitions it asked others to run.
    A master may have ``close()``, called when the session closes."""
    scheme = target.split("://", 1)[0] if "://" in target else target
    factory = get_registries().transports.get(scheme)
    if factory is None:
        raise errors.InvalidArgumentError(None, None, (
            f"no transport for session target {target!r}. Use '' (this process), 'local://<name>' "
            f"(shared in this process), or install the distributed package (pip install tensorweave[distributed]) "
            f"for 'mpi://' targets."))
    return factory(target, config)


def _expand_feeds(items):
    """The feed (key, value) pairs with each SparseTensor key (any type with a registered feed) split into its
    parts."""
    for key, value in items:
        split = feed_conversion(key)
        if split is None:
            yield key, value
        else:
            yield from split(key, value)


def _feed_checker(tensor):
    return lambda value: convert_feed(tensor, value)
