"""``tf.train.ClusterSpec`` (the jobs of a cluster and their tasks' addresses) and ``tf.train.Server``.

A Server is one task of a cluster. Its ``target`` is what ``tf.Session`` takes; the serving itself belongs
to the transport registered for the protocol (``mpi`` from tensorweave[distributed]); the core holds no
networking. ``Server.create_local_server()`` is an in-process ``local://`` target.
"""

import itertools

from tensorweave.framework.registry import get_registries

__all__ = ["ClusterSpec", "Server"]


class ClusterSpec:
    """Jobs → tasks → addresses, from a dict (job → list of addresses or {index: address}) or a ClusterSpec.

    ``ClusterSpec.from_mpi(num_ps=)`` builds one from the MPI world (needs tensorweave[distributed]).
    """

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._spec = {job: dict(tasks) for job, tasks in cluster._spec.items()}
            return
        if not isinstance(cluster, dict):
            raise TypeError(f"ClusterSpec expects a dict of job name -> list (or dict) of task addresses, or a "
                            f"ClusterSpec; got {type(cluster).__name__}: {cluster!r}")
        self._spec = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str) or not job or "/" in job or ":" in job:
                raise ValueError(f"ClusterSpec: job name {job!r} must be a non-empty string without '/' or ':'")
            if isinstance(tasks, (list, tuple)):
                tasks = dict(enumerate(tasks))
            elif not isinstance(tasks, dict):
                raise TypeError(f"ClusterSpec: tasks of job {job!r} must be a list of addresses or a dict of "
                                f"task index -> address, got {tasks!r}")
            for index, address in tasks.items():
                if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                    raise ValueError(f"ClusterSpec: task index {index!r} of job {job!r} must be an int >= 0")
                if not isinstance(address, str) or not address:
                    raise ValueError(f"ClusterSpec: address of /job:{job}/task:{index} must be a non-empty "
                                     f"string such as 'host:2222', got {address!r}")
            self._spec[job] = dict(sorted(tasks.items()))

    @classmethod
    def from_mpi(cls, num_ps=1, comm=None):
        """Ranks 0..num_ps-1 are ps tasks 0..num_ps-1; the other ranks are worker tasks 0, 1, ..."""
        transport = get_registries().transports.get("mpi")
        if transport is None or not hasattr(transport, "world_size"):
            raise ImportError("ClusterSpec.from_mpi needs the MPI transport: pip install tensorweave[distributed] "
                              "(it brings mpi4py and an MPI runtime), then launch with "
                              "`mpiexec -n N python -m mpi4py script.py`")
        size = transport.world_size() if comm is None else comm.Get_size()
        if not isinstance(num_ps, int) or num_ps < 0 or num_ps >= size:
            raise ValueError(f"ClusterSpec.from_mpi: num_ps={num_ps!r} must be an int in [0, {size - 1}] for an "
                             f"MPI world of {size} ranks (at least one rank must be a worker); launch more ranks "
                             f"with mpiexec -n")
        ps = [f"mpi:rank{r}" for r in range(num_ps)]
        workers = [f"mpi:rank{r}" for r in range(num_ps, size)]
        return cls({"ps": ps, "worker": workers} if ps else {"worker": workers})

    def as_dict(self):
        """job → list of addresses when the indices are 0..n-1, else job → {index: address} (as TF)."""
        out = {}
        for job, tasks in self._spec.items():
            dense = list(tasks) == list(range(len(tasks)))
            out[job] = [tasks[i] for i in range(len(tasks))] if dense else dict(tasks)
        return out

    def as_cluster_def(self):
        return {"job": [{"name": job, "tasks": dict(tasks)} for job, tasks in self._spec.items()]}

    @property
    def jobs(self):
        return list(self._spec)

    def num_tasks(self, job_name):
        return len(self._tasks(job_name))

    def task_indices(self, job_name):
        return sorted(self._tasks(job_name))

    def task_address(self, job_name, task_index):
        tasks = self._tasks(job_name)
        if task_index not in tasks:
            raise ValueError(f"ClusterSpec: no task {task_index!r} in job {job_name!r}; its tasks are "
                             f"{sorted(tasks)}")
        return tasks[task_index]

    def job_tasks(self, job_name):
        """The addresses of the job's tasks by index, with None where an index is missing (as TF)."""
        tasks = self._tasks(job_name)
        if not tasks:
            return []
        return [tasks.get(i) for i in range(max(tasks) + 1)]

    def _tasks(self, job_name):
        if job_name not in self._spec:
            raise ValueError(f"ClusterSpec: no job {job_name!r}; the cluster's jobs are {self.jobs}")
        return self._spec[job_name]

    def __bool__(self):
        return bool(self._spec)

    def __eq__(self, other):
        if isinstance(other, dict):
            other = ClusterSpec(other)
        return isinstance(other, ClusterSpec) and self._spec == other._spec

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(tuple((job, tuple(tasks.items())) for job, tasks in self._spec.items()))

    def __repr__(self):
        return f"ClusterSpec({self.as_dict()!r})"


_local_servers = itertools.count()


class Server:
    """One task of a cluster: ``target`` for sessions, ``join()`` to serve until the job ends (ps tasks)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True):
        if isinstance(server_or_cluster_def, dict) and "cluster" in server_or_cluster_def:
            server_def = server_or_cluster_def  # a server_def of another Server
            cluster = ClusterSpec(server_def["cluster"])
            job_name = job_name if job_name is not None else server_def.get("job_name")
            task_index = task_index if task_index is not None else server_def.get("task_index")
            protocol = protocol or server_def.get("protocol")
            config = config if config is not None else server_def.get("default_session_config")
        else:
            cluster = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError(f"tf.train.Server: job_name is required for a cluster of several jobs "
                                 f"({cluster.jobs}); pass job_name='worker' or 'ps'")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError(f"tf.train.Server: task_index is required, job {job_name!r} has tasks {indices}")
            task_index = indices[0]
        address = cluster.task_address(job_name, task_index)  # names a missing job or task
        protocol = protocol or _protocol_of(address)
        self._server_def = {"cluster": cluster, "job_name": job_name, "task_index": task_index,
                            "protocol": protocol, "default_session_config": config}
        self._impl = _transport_server(protocol, self._server_def)
        self._started = False
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A single-task server in this process; its target is a fresh ``local://`` session target."""
        name = f"local://server{next(_local_servers)}"
        return Server({"localhost": [name]}, job_name="localhost", task_index=0, protocol="local", config=config,
                      start=start)

    @property
    def server_def(self):
        return dict(self._server_def)

    @property
    def target(self):
        """The session target of this task (``tf.Session(server.target)``)."""
        return self._impl.target

    def start(self):
        if not self._started:
            self._impl.start()
            self._started = True

    def join(self):
        """Blocks until the job ends (every worker closed or the job failed); what ps tasks call."""
        self.start()
        self._impl.join()


def _protocol_of(address):
    if address.startswith("local://"):
        return "local"
    if address.startswith("mpi:"):
        return "mpi"
    raise ValueError(f"tf.train.Server: cannot serve address {address!r}: this build has no gRPC; use "
                     f"tf.train.ClusterSpec.from_mpi(num_ps=...) under mpiexec (addresses 'mpi:rank<N>'), or "
                     f"tf.train.Server.create_local_server() in one process")


class _LocalServer:
    def __init__(self, server_def):
        cluster = server_def["cluster"]
        self.target = cluster.task_address(server_def["job_name"], server_def["task_index"])
        if not self.target.startswith("local://"):
            self.target = "local://" + self.target

    def start(self):
        pass

    def join(self):
        raise RuntimeError("Server.join() on an in-process local server would block forever: nothing else can "
                           "connect to it; join ps tasks of an MPI cluster instead")


def _transport_server(protocol, server_def):
    if protocol == "local":
        return _LocalServer(server_def)
    factory = get_registries().transports.get(protocol)
    if factory is None or not hasattr(factory, "start_server"):
        raise ValueError(f"tf.train.Server: no server for protocol {protocol!r}; for 'mpi' install the "
                         f"distributed package (pip install tensorweave[distributed]) and launch with mpiexec")
    return factory.start_server(server_def)


def task_role():
    """(is_chief, description) of this process in the job a transport runs it in (an MPI job, once it started),
    or None outside any; what MonitoredTrainingSession goes by when it is not told ``is_chief``."""
    for _, factory in get_registries().transports.items():
        role = getattr(factory, "task_role", None)
        answer = role() if callable(role) else None
        if answer is not None:
            return answer
    return None
