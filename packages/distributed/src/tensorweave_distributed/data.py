"""Input sharding and rank-0-only side effects for data-parallel training.

Each rank trains on its own slice of every global batch (rank-strided: rank r takes rows r, r+N, r+2N...),
so N ranks with local batch b see the same examples per step as one process with batch N*b, and
averaging their gradients gives that process's gradient. Checkpoints and summaries are written by rank 0
only: ``checkpoint_dir=twd.chief_only("ckpt")`` gives the directory on rank 0 and None elsewhere (the
other ranks get rank 0's weights from ``BroadcastGlobalVariablesHook``).
"""

from tensorweave_distributed.world import get_world


def rank():
    return get_world().rank


def size():
    return get_world().size


def shard(data, rank=None, size=None):  # noqa: A002 - rank/size as Horovod names them
    """``data[rank::size]``: this rank's rows of a global batch (or of a whole dataset, indices, a list)."""
    world = get_world() if rank is None or size is None else None
    rank = world.rank if rank is None else rank
    size = world.size if size is None else size
    if not 0 <= rank < size:
        raise ValueError(f"rank {rank} is not in 0..{size - 1}")
    return data[rank::size]


def shard_batches(num_examples, global_batch_size, rng=None, rank=None, size=None):
    """Yields this rank's index arrays, one per global batch of one epoch (shuffled with ``rng``, which
    must be seeded alike on every rank). ``global_batch_size`` must be a multiple of the number of ranks
    so every rank steps with the same local batch size."""
    import numpy as np
    world = get_world() if rank is None or size is None else None
    size = world.size if size is None else size
    if global_batch_size % size:
        raise ValueError(f"global batch size {global_batch_size} is not a multiple of the {size} ranks")
    order = np.arange(num_examples) if rng is None else rng.permutation(num_examples)
    for start in range(0, num_examples - global_batch_size + 1, global_batch_size):
        yield shard(order[start:start + global_batch_size], rank, size)


def chief_rank(world):
    """The chief's rank: rank 0, or once a ``tf.train.Server`` named the ranks' tasks, TF1's chief task:
    /job:chief/task:0, else /job:master/task:0, else /job:worker/task:0 (never a parameter server)."""
    by_task = {task: rank for rank, task in world.task_names.items()}
    return next((by_task[t] for t in ("/job:chief/task:0", "/job:master/task:0", "/job:worker/task:0")
                 if t in by_task), 0)


def is_chief():
    """Whether this process is the chief, the one that writes checkpoints and summaries (``chief_rank``)."""
    world = get_world()
    return world.rank == chief_rank(world)


def task_role():
    """(is_chief, description) for MonitoredTrainingSession, or None before ``init()``."""
    world = get_world(required=False)
    if world is None:
        return None
    chief = chief_rank(world)
    return world.rank == chief, (f"{world.describe(world.rank)} of the {world.size} ranks of this MPI job; "
                                 f"the chief is {world.describe(chief)}")


def chief_only(value):
    """``value`` on the chief, None on the other ranks (for checkpoint_dir, summary writers, log paths)."""
    return value if is_chief() else None
