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
