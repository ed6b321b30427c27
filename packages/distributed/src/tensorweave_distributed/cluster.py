"""``mpi://`` session targets: the tasks of the job (one per rank), their devices, and the master that gives
each step its cross-process rendezvous.

Every rank builds the same graph and makes the same ``Session.run`` calls on a ``Session("mpi://")``
(SPMD). Ops placed on ``/job:worker/task:<t>`` run on rank t; ops without a task, feeds and fetches sit
with the chief (task 0), so every rank compiles the same plan and runs the partitions of its own task;
cross-task edges are ``_Send``/``_Recv`` pairs through the MPI transport. ``Session.run`` returns the
fetched values on the chief and None on the other ranks (they ran their share of the step).

A step's key is (session number, the run signature's digest, how many times this session ran that
signature): the k-th run of a signature on one rank meets the k-th run of it on the others, so
concurrent steps of different signatures never meet the wrong partner. Sessions on ``mpi://`` targets
must therefore be created, and each signature run, in the same order on every rank.
"""

import hashlib
import itertools
import threading
import weakref

from tensorweave import DeviceSpec
from tensorweave.extension import Device
from tensorweave.runtime.device_mgr import DeviceMgr

from tensorweave_distributed.rendezvous import MpiRendezvous
from tensorweave_distributed.world import init

SCHEME = "mpi"


class Layout:
    """Which rank runs which task: ``{job: [rank of task 0, rank of task 1, ...]}``."""

    def __init__(self, jobs):
        self.jobs = {job: list(ranks) for job, ranks in jobs.items()}
        self._task_of = {}
        for job, ranks in self.jobs.items():
            for task, rank in enumerate(ranks):
                if rank in self._task_of:
                    raise ValueError(f"rank {rank} is given two tasks: {self._task_of[rank]} and ({job!r}, {task})")
                self._task_of[rank] = (job, task)

    @classmethod
    def default(cls, size, job="worker"):
        return cls({job: range(size)})

    def rank_of(self, job, task):
        ranks = self.jobs.get(job)
        if ranks is None or not 0 <= task < len(ranks):
            raise ValueError(f"no task {job}:{task} in this MPI job (tasks: "
                             f"{', '.join(f'{j}:0..{len(r) - 1}' for j, r in self.jobs.items())})")
        return ranks[task]

    def task_of(self, rank):
        try:
            return self._task_of[rank]
        except KeyError:
            raise ValueError(f"rank {rank} runs no task of the layout {self.jobs}") from None


class RemoteDevice(Device):
    """A device of another rank: placement and rendezvous keys see it; its kernels run over there."""

    is_remote = True

    def __init__(self, name, device_type, index, incarnation, rank):
        super().__init__(name, device_type, index, f"on rank {rank}")
        self.incarnation = incarnation
        self.rank = rank


def _incarnation(launch_id, name):
    digest = hashlib.blake2b(f"{launch_id}:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


class ClusterDeviceMgr(DeviceMgr):
    """This rank's devices, plus a stand-in for each device of every other task (every task is assumed to
    have the devices this one has). Ops that name no task go to the chief's devices."""

    def __init__(self, config, layout, rank, launch_id):
        job, task = layout.task_of(rank)
        super().__init__(config, job=job, task=task)
        self.layout = layout
        self.rank = rank
        for device in self.devices:
            device.incarnation = _incarnation(launch_id, device.name)
            device.rank = rank
        self.remote = []
        for other in sorted(layout._task_of):
            if other == rank:
                continue
            other_job, other_task = layout.task_of(other)
            for device in self.devices:
                name = f"/job:{other_job}/replica:0/task:{other_task}/device:{device.device_type}:{device.index}"
                self.remote.append(RemoteDevice(name, device.device_type, device.index,
                                                _incarnation(launch_id, name), other))
        for device in self.remote:
            self._by_name[device.name] = device
        self.chief_job, self.chief_task = layout.task_of(0)
        self._rank_cache = {}
        self._parsed = {}

    def matching(self, spec):
        if not isinstance(spec, DeviceSpec):
            spec = DeviceSpec.from_string(spec)
        if spec.job in (None, "localhost") and spec.task is None:
            spec = spec.copy()
            spec.job, spec.task = (self.chief_job, self.chief_task) if spec.job is None else (self.job, self.task)
        found = []
        for device in self.devices + self.remote:
            parsed = self._parsed.get(device.name) or self._parsed.setdefault(device.name,
                                                                              DeviceSpec.from_string(device.name))
            if spec.job is not None and spec.job != parsed.job:
                continue
            if spec.task is not None and spec.task != parsed.task:
                continue
            if spec.replica is not None and spec.replica != parsed.replica:
                continue
            if spec.device_type is not None and spec.device_type != device.device_type:
                continue
            if spec.device_index is not None and spec.device_index != device.index:
                continue
            found.append(device)
        return sorted(found, key=lambda d: (-self.type_priority.get(d.device_type, 0), d.device_type, d.index,
                                            d.rank))

    def host_device(self):
        hosts = self.matching(DeviceSpec(self.chief_job, None, self.chief_task))
        return next((d for d in hosts if d.is_host), hosts[0] if hosts else None)

    def rank_of_device(self, name):
        rank = self._rank_cache.get(name)
        if rank is None:
            spec = DeviceSpec.from_string(name)
            if spec.job in (None, "localhost"):
                rank = self.rank
            else:
                rank = self.layout.rank_of(spec.job, spec.task or 0)
            self._rank_cache[name] = rank
        return rank


_layout = None
_device_mgrs = {}
_session_numbers = itertools.count()
_shared_lock = threading.Lock()


def set_layout(layout):
    """Uses ``layout`` (a Layout) for the ``mpi://`` sessions created from now on (before the first one)."""
    global _layout
    with _shared_lock:
        if _device_mgrs:
            raise RuntimeError("set the MPI task layout before creating the first mpi:// session")
        _layout = layout


class MpiMaster:
    """What a Session on an ``mpi://`` target uses: the cluster's devices and a rendezvous per step."""

    def __init__(self, target, config):
        self.world = init()
        self.target = target
        with _shared_lock:
            layout = _layout or Layout.default(self.world.size, self.world.settings.job)
            mgr = _device_mgrs.get(target)
            if mgr is None:
                mgr = _device_mgrs[target] = ClusterDeviceMgr(config, layout, self.world.rank, self.world.launch_id)
            self.number = next(_session_numbers)
        self.device_mgr = mgr
        self._counts = {}
        self._digests = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def rendezvous(self, plan=None):
        signature = self._digest(plan)
        with self._lock:
            count = self._counts[signature] = self._counts.get(signature, 0) + 1
        return MpiRendezvous(self.world.transport, (self.number, signature, count), self.device_mgr.rank_of_device)

    def _digest(self, plan):
        if plan is None:
            return ""
        digest = self._digests.get(plan)
        if digest is None:
            fetches, targets, feeds = plan._signature
            text = repr(([t.name for t in fetches], [o.name for o in targets], [t.name for t in feeds]))
            digest = self._digests[plan] = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        return digest
