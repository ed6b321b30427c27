"""What every test job does first: start tensorweave_distributed and check the world size it was given."""

import os

import tensorweave_distributed as twd


def start(**settings):
    twd.init(**settings)
    expected = int(os.environ["TW_TEST_WORLD_SIZE"])
    assert twd.size() == expected, f"rank {twd.rank()} sees {twd.size()} ranks, the test launched {expected}"
    print(f"world size {expected} ok on rank {twd.rank()}", flush=True)
    return twd.rank(), twd.size()


def start_ps_cluster(**settings):
    """Rank 0 is the ps task, the others workers: (cluster, job, task, server) for a 1 ps + 2 workers job."""
    import tensorweave as tf
    rank, size = start(**settings)
    assert size == 3, "this job needs 3 ranks"
    cluster = tf.train.ClusterSpec.from_mpi(num_ps=1)
    job, task = ("ps", 0) if rank == 0 else ("worker", rank - 1)
    return cluster, job, task, tf.train.Server(cluster, job_name=job, task_index=task)
