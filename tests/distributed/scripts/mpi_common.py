"""What every test job does first: start tensorweave_distributed and check the world size it was given."""

import os

import tensorweave_distributed as twd


def start(**settings):
    twd.init(**settings)
    expected = int(os.environ["TW_TEST_WORLD_SIZE"])
    assert twd.size() == expected, f"rank {twd.rank()} sees {twd.size()} ranks, the test launched {expected}"
    print(f"world size {expected} ok on rank {twd.rank()}", flush=True)
    return twd.rank(), twd.size()


def start_ps_cluster(num_ps=1, **settings):
    """Ranks 0..num_ps-1 are the ps tasks, the others 2 workers: (cluster, job, task, server)."""
    import tensorweave as tf
    rank, size = start(**settings)
    assert size == num_ps + 2, f"this job needs {num_ps + 2} ranks ({num_ps} ps + 2 workers)"
    cluster = tf.train.ClusterSpec.from_mpi(num_ps=num_ps)
    job, task = ("ps", rank) if rank < num_ps else ("worker", rank - num_ps)
    return cluster, job, task, tf.train.Server(cluster, job_name=job, task_index=task)
