"""tf.train.Server under mpiexec: a ps task serving two asynchronous workers."""

import re

from mpi_launch import SCRIPTS, run_mpi


def test_ps_serves_two_async_workers():
    proc = run_mpi(SCRIPTS / "ps_server_job.py", 3, timeout=180)
    assert "ps joined: both workers ended" in proc.stdout, proc.stdout
    for task in (0, 1):
        assert f"worker {task}: " in proc.stdout and "shared ok" in proc.stdout, proc.stdout


def test_sync_replicas_on_a_ps():
    proc = run_mpi(SCRIPTS / "ps_sync_job.py", 3, timeout=180)
    assert "ps joined: both workers ended" in proc.stdout, proc.stdout
    found = [re.search(rf"worker {task}: .* global step (\d+), pushes (\d+), w (\[.*?\]), sync ok", proc.stdout)
             for task in (0, 1)]
    assert all(found), proc.stdout
    steps = int(found[0].group(1))
    # each applied step averaged 2 fresh gradients: at least 2 pushes per step (asynchronous would be 1)
    assert sum(int(f.group(2)) for f in found) >= 2 * steps, proc.stdout
    assert found[0].group(3) == found[1].group(3), proc.stdout  # both workers see the same ps variables


def test_sync_replicas_with_a_backup_worker():
    proc = run_mpi(SCRIPTS / "ps_sync_job.py", 3, 1, timeout=180)  # replicas_to_aggregate=1 of 2
    found = [re.search(rf"worker {task}: .* global step (\d+), pushes (\d+), w (\[.*?\]), sync ok", proc.stdout)
             for task in (0, 1)]
    assert all(found), proc.stdout
    steps, pushes = int(found[0].group(1)), sum(int(f.group(2)) for f in found)
    # each step applied the first gradient to arrive; the other, stale by then, was dropped
    assert steps < pushes, proc.stdout
    assert found[0].group(3) == found[1].group(3), proc.stdout
