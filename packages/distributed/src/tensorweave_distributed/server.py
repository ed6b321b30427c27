"""``tf.train.Server`` over MPI: workers run their own steps; parameter-server tasks serve them.

A cluster from ``ClusterSpec.from_mpi`` names each task's rank (``mpi:rank<r>``). A session on a worker's
``server.target`` (``mpi://server/<job>/<task>``) is not SPMD: the worker is its own chief (feeds, fetches
and unplaced ops stay with it) and, at each step, asks every ps task to run the step's ps partitions
(the paper's RegisterGraph/RunGraph): the request carries the step's key, its fetch/target/feed names and
the nodes the worker's graph gained since its last request. The ps adds them to its copy of the graph,
places it exactly as the worker did, and runs its own partitions under the worker's step key, so cross-task edges meet over the MPI
transport. All sessions served by a ps share its devices, hence its variables. ``join()`` returns when
every worker process has ended (each tells the ps tasks at exit) and raises if the job failed.
"""

import atexit
import hashlib
import itertools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import tensorweave as tf

from tensorweave_distributed.cluster import ClusterDeviceMgr, Layout
from tensorweave_distributed.rendezvous import MpiRendezvous
from tensorweave_distributed.world import init

_log = logging.getLogger("tensorweave_distributed")
RUN, DONE, CLOSE = "tw.server.run", "tw.server.done", "tw.server.close"
PREFIX, SERVED = "mpi://server/", "mpi://served/"
_MAX_SERVING_THREADS = 1024
_SERVING_SECONDS = 1.0  # a ps polls fast for this long after a worker's request
PS_DONE = "__ps_step_done__:{}"  # a ps task's "my partitions of this step ran", keyed by its rank: the
# transport matches messages by (step, key) only, so two ps tasks' replies need different keys
_server = None
_sessions = itertools.count()


def layout_of(cluster):
    """The ranks of a ClusterSpec whose addresses are ``mpi:rank<r>`` (as ``ClusterSpec.from_mpi`` makes)."""
    jobs = {}
    for job in cluster.jobs:
        ranks = []
        for task in range(cluster.num_tasks(job)):
            address = cluster.task_address(job, task)
            if not address.startswith("mpi:rank") or not address[8:].isdigit():
                raise ValueError(f"/job:{job}/task:{task} has address {address!r}; an MPI cluster names ranks as "
                                 f"'mpi:rank<N>' (build it with tf.train.ClusterSpec.from_mpi(num_ps=...))")
            ranks.append(int(address[8:]))
        jobs[job] = ranks
    return Layout(jobs)


def start_server(server_def):
    """The transport's part of ``tf.train.Server``: one server per process."""
    global _server
    if _server is not None:
        raise RuntimeError(f"this process already runs {_server.target}; create one tf.train.Server per process")
    _server = MpiServer(server_def)
    return _server


class MpiServer:
    def __init__(self, server_def):
        self.world = init()
        self.job, self.task = server_def["job_name"], server_def["task_index"]
        self.config = server_def["default_session_config"]
        self.layout = layout_of(server_def["cluster"])
        rank = self.layout.rank_of(self.job, self.task)
        if rank != self.world.rank:
            raise ValueError(f"tf.train.Server(job_name={self.job!r}, task_index={self.task}): that task is rank "
                             f"{rank} in the cluster, but this process is rank {self.world.rank}; pass the task "
                             f"of this rank")
        self.target = f"{PREFIX}{self.job}/{self.task}"
        self.world.task_names.update({r: f"/job:{job}/task:{task}" for job, ranks in self.layout.jobs.items()
                                      for task, r in enumerate(ranks)})
        self.device_mgr = self._device_mgr(self.job, self.task)
        self.ps_ranks = [r for r in self.layout.jobs.get("ps", []) if r != self.world.rank]
        self.workers = {r for job, ranks in self.layout.jobs.items() if job != "ps" for r in ranks}
        self._served, self._graphs, self._closed = {}, {}, set()
        self._lock = threading.Lock()
        # a served step may block (a queue, a token) until other workers' steps run: a small pool could fill
        # with blocked steps and deadlock the job, so threads are added as requests arrive (reused when idle)
        self._pool = ThreadPoolExecutor(max_workers=_MAX_SERVING_THREADS, thread_name_prefix="tensorweave-ps")
        self._ended, self._finished = set(), threading.Event()
        self._failure = None
        self._started = False
        self._last_request = float("-inf")

    def _device_mgr(self, chief_job, chief_task):
        mgr = ClusterDeviceMgr(self.config, self.layout, self.world.rank, self.world.launch_id)
        mgr.chief_job, mgr.chief_task = chief_job, chief_task
        return mgr

    def start(self):
        if self._started:
            return
        self._started = True
        self.world.control.register_service(RUN, self._on_run)
        self.world.control.register_service(DONE, self._on_done)
        self.world.control.register_service(CLOSE, self._on_close)
        self.world.on_failure(self._on_failure)
        # while workers are stepping, the next request follows within milliseconds: poll for it like a
        # transfer in flight instead of at the idle rate (2 ms), which would add that much to every step
        self.world.engine.add_busy_check(lambda: time.monotonic() - self._last_request < _SERVING_SECONDS)
        if self.world.rank in self.workers:
            atexit.register(self._say_done)
        from tensorweave_distributed import eager  # every rank's server listens before any worker posts
        eager.allreduce(np.zeros(1, np.float32), "tw.server.start")

    def join(self):
        """Serves until every worker process ended; raises the job's failure if it failed."""
        if self.world.rank in self.workers and not self.ps_ranks and not self.layout.jobs.get("ps"):
            return
        self._finished.wait()
        with self._lock:  # steps still blocked here (a queue no worker will feed again) are cancelled
            served, self._served = list(self._served.values()), {}
        for session, _ in served:
            session.close()
        if self._failure is not None:
            raise self._failure

    # ---- worker side ------------------------------------------------------------------------------
    def _say_done(self):
        for rank in self.layout.jobs.get("ps", []):
            if rank != self.world.rank and self.world.failure is None:
                self.world.control.post(rank, DONE, None)

    # ---- ps side (MPI thread: hand work to the pool) ----------------------------------------------
    def _on_done(self, source, _):
        self._ended.add(source)
        if self.workers <= self._ended:
            self._finished.set()

    def _on_failure(self, error):
        self._failure = error
        self._finished.set()

    def _on_close(self, source, session):
        """A worker closed its session: drop its graph and close what served it (after its last request)."""
        name = (source, session)
        with self._lock:
            self._closed.add(name)
            self._graphs.pop(name, None)
            entry = self._served.pop(name, None)
        if entry is not None:
            entry[0].close()

    def _on_run(self, source, request):
        self._last_request = time.monotonic()
        if request["graph"] is not None:  # in message order: the nodes a step needs arrive before it runs
            with self._lock:
                self._graphs.setdefault((source, request["session"]), []).append(request["graph"])
        self._pool.submit(self._serve, source, request)

    def _serve(self, source, request):
        try:
            session, graph = self._session_for(source, request)
            feeds = {graph.get_tensor_by_name(name): _stand_in(graph.get_tensor_by_name(name))
                     for name in request["feeds"]}
            fetches = [graph.as_graph_element(n) for n in request["fetches"] + request["targets"]]
            _step_key.key = request["key"]
            session.run(fetches, feeds)
            reply = PS_DONE.format(self.world.rank)  # RunGraph's reply
            self.world.transport.send(source, request["key"], reply, np.zeros(0, np.int8))
        except Exception as error:  # the failed partition aborts the step, so the worker hears of it too
            # cancelled by join(), or aborted by the worker (its session closed, its own op failed): the worker
            # reports that; only a failure that starts here is this task's to report
            aborted_elsewhere = isinstance(error, (tf.errors.AbortedError, tf.errors.CancelledError))
            log = _log.debug if self._finished.is_set() or aborted_elsewhere else _log.error
            me, worker = self.world.describe(self.world.rank), self.world.describe(source)
            log("%s: a step of %s failed: %s", me, worker, error)
            self.world.transport.abort_step(request["key"], tf.errors.AbortedError(
                None, None, f"its part of a step of {worker} failed: {type(error).__name__}: {error}"))
        finally:
            _step_key.key = None

    def _session_for(self, source, request):
        """The session serving one worker session; its graph grows as the worker's does (only new nodes are
        imported), so steps in flight on it, such as a queue runner's, keep running."""
        name = (source, request["session"])
        with self._lock:
            if name in self._closed:
                raise tf.errors.CancelledError(None, None, f"{self.world.describe(source)} closed this session")
            entry = self._served.get(name)
            additions = self._graphs.pop(name, [])
            if entry is None and not additions:
                raise RuntimeError(f"{self.world.describe(source)} ran a step before sending its graph")
            if entry is None:
                mgr = self._device_mgr(*self.layout.task_of(source))
                mgr.devices = self.device_mgr.devices  # every served session shares this task's variables
                for device in self.device_mgr.devices:
                    mgr._by_name[device.name] = device
                    mgr._by_name[f"/device:{device.device_type}:{device.index}"] = device
                target = f"{SERVED}{source}/{request['session']}"
                _served_mgrs[target] = mgr
                graph = tf.Graph()
                entry = self._served[name] = (tf.Session(target, graph=graph, config=self.config), graph)
            for graph_bytes in additions:
                _import_new_nodes(entry[1], tf.GraphDef.FromString(graph_bytes))
            return entry


def _import_new_nodes(graph, graph_def):
    """Adds the nodes of ``graph_def`` that ``graph`` lacks, wired to the ones it has."""
    have = {op.name: op for op in graph.get_operations()}
    new = [node for node in graph_def.node if node.name not in have]
    if not new:
        return
    existing = {}
    for node in new:
        for ref in node.input:
            src = ref[1:] if ref.startswith("^") else ref.rsplit(":", 1)[0]
            if src in have:
                existing[ref] = have[src] if ref.startswith("^") else \
                    have[src].outputs[int(ref.rsplit(":", 1)[1]) if ":" in ref else 0]
    delta = tf.GraphDef()
    delta.node.extend(new)
    with graph.as_default():
        tf.import_graph_def(delta, input_map=existing, name="")


_step_key = threading.local()
_served_mgrs = {}


def _stand_in(tensor):
    """A value for a feed the worker keeps: the ps never reads it, but the session wants every feed."""
    shape = [0 if d is None else d for d in tensor.shape.as_list()] if tensor.shape.ndims is not None else []
    return np.zeros(shape, dtype=object if tensor.dtype == tf.string else tensor.dtype.as_numpy_dtype)


class ClientMaster:
    """A worker's session on its server's target: it is its own chief and asks the ps tasks to join each step."""

    def __init__(self, target, config):
        if _server is None or _server.target != target:
            raise ValueError(f"session target {target!r} is not this process's server "
                             f"({_server.target if _server else 'none started'}); use tf.Session(server.target)")
        self.server = _server
        self.device_mgr = _server.device_mgr
        self.number = next(_sessions)
        self._counts, self._sent = {}, {}
        self._lock = threading.Lock()

    def rendezvous(self, plan=None):
        fetches, targets, feeds = plan._signature
        names = ([t.name for t in fetches], [o.name for o in targets], [t.name for t in feeds])
        digest = hashlib.blake2b(repr(names).encode(), digest_size=8).hexdigest()
        graph = (list(fetches) + list(targets) + list(feeds))[0].graph  # the client's Graph
        with self._lock:
            count = self._counts[digest] = self._counts.get(digest, 0) + 1
            version, sent = self._sent.get(id(graph), (-1, 0))  # the graph's version grows with each op made
            added, now = None, graph.version
            if now != version:  # ops are only appended (one whose shape check fails is taken back at once)
                ops = graph.get_operations()
                added = tf.GraphDef(node=[op.node_def for op in ops[sent:]]).SerializeToString() if ops[sent:] else None
                self._sent[id(graph)] = (now, len(ops))
        key = ("srv", self.server.world.rank, self.number, digest, count)
        request = {"session": self.number, "key": key, "fetches": names[0], "targets": names[1], "feeds": names[2],
                   "graph": added}  # the nodes added since the last request: the ps extends its copy
        for rank in self.server.ps_ranks:
            self.server.world.control.post(rank, RUN, request)
        return _ClientRendezvous(self.server.world.transport, key, self.device_mgr.rank_of_device,
                                 self.server.ps_ranks)

    def close(self):
        """TF's CloseSession: every ps task drops the graph and the session it kept for this one."""
        if self.server.world.failure is None:
            for rank in self.server.ps_ranks:
                self.server.world.control.post(rank, CLOSE, self.number)


class _ClientRendezvous(MpiRendezvous):
    def __init__(self, transport, step, rank_of_device, ps_ranks):
        super().__init__(transport, step, rank_of_device)
        self._ps_ranks = ps_ranks

    def finish(self):
        """A worker's step ends when its partitions and every ps task's partitions of it have run."""
        pending, done, failures = len(self._ps_ranks), threading.Event(), []
        lock = threading.Lock()

        def replied(error, value, is_dead):
            nonlocal pending
            with lock:
                if error is not None:
                    failures.append(error)
                pending -= 1
                if pending == 0:
                    done.set()

        if not pending:
            return
        for rank in self._ps_ranks:
            self._transport.recv(rank, self.step, PS_DONE.format(rank), replied)
        done.wait()
        if failures:
            raise failures[0]


class ServedMaster:
    """The ps's session for one worker's graph: the worker's placement, the step key of the worker's request."""

    def __init__(self, target, config):
        self.device_mgr = _served_mgrs.pop(target)
        self._transport = init().transport

    def rendezvous(self, plan=None):
        return MpiRendezvous(self._transport, _step_key.key, self.device_mgr.rank_of_device)


def master_for(target, config):
    if target.startswith(PREFIX):
        return ClientMaster(target, config)
    if target.startswith(SERVED):
        return ServedMaster(target, config)
    return None
