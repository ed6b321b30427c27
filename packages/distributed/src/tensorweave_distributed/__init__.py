"""tensorweave_distributed: Tensorweave across processes over MPI (``import tensorweave_distributed as twd``).

Horovod's data-parallel API on Tensorweave graphs::

    twd.init()
    opt = twd.DistributedOptimizer(tf.train.AdamOptimizer(0.001 * twd.size()))
    hooks = [twd.BroadcastGlobalVariablesHook(0)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=twd.chief_only("ckpt"), hooks=hooks) as sess: ...

launched as ``mpiexec -n 4 python -m mpi4py train.py``. Collective ops (``allreduce``, ``allgather``,
``broadcast``, ``reducescatter``) work in any graph; ``tf.Session("mpi://")`` runs graphs whose ops sit on
``/job:worker/task:<rank>`` across the ranks, with Send/Recv over MPI.
"""

from tensorweave import ConfigProto as _CoreConfigProto

from tensorweave_distributed.collective_ops import (  # noqa: F401
    Average, Max, Min, Sum, all_gather, all_reduce, allgather, allreduce, broadcast, grouped_allgather,
    grouped_allreduce, grouped_broadcast, reduce_scatter, reducescatter,
)
from tensorweave_distributed.data import chief_only, is_chief, shard, shard_batches  # noqa: F401
from tensorweave_distributed.hooks import (  # noqa: F401
    BroadcastGlobalVariablesHook, broadcast_global_variables, broadcast_variables,
)
from tensorweave_distributed.optimizer import DistributedOptimizer  # noqa: F401
from tensorweave_distributed.reduction import Compression  # noqa: F401
from tensorweave_distributed.settings import ALGORITHMS  # noqa: F401
from tensorweave_distributed.world import get_world, init, is_initialized, shutdown  # noqa: F401

TARGET = "mpi://"


def rank():
    """This process's rank in the job (0..size()-1)."""
    return get_world().rank


def size():
    """The number of ranks."""
    return get_world().size


def local_rank():
    """This process's rank among the ranks on its host (pin one device per local rank)."""
    return get_world().local_rank


def local_size():
    return get_world().local_size


def cross_rank():
    """This host's index among the hosts (ranks with the same local rank)."""
    return get_world().cross_rank


def cross_size():
    return get_world().cross_size


def mpi_threads_supported():
    """Whether the MPI library provides MPI_THREAD_MULTIPLE (Horovod's name)."""
    return get_world().threads_multiple


def mpi_enabled():
    return True


class ConfigProto(_CoreConfigProto):
    """``tf.ConfigProto`` plus this package's per-session option ``allreduce_algorithm`` (auto, ring,
    recursive_doubling or native) for the collectives that do not name one."""

    def __init__(self, allreduce_algorithm=None, **kwargs):
        super().__init__(**kwargs)
        if allreduce_algorithm is not None and allreduce_algorithm not in ALGORITHMS:
            raise ValueError(f"unknown all-reduce algorithm {allreduce_algorithm!r}; choose one of "
                             f"{', '.join(ALGORITHMS)}")
        self.allreduce_algorithm = allreduce_algorithm
