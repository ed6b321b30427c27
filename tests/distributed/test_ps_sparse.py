"""A 1000 x 16 embedding partitioned across 2 ps tasks, trained by 2 workers under mpiexec (4 ranks):
asynchronously, and with SyncReplicasOptimizer aggregating sparse gradients on the ps tasks."""

import re

import pytest
from mpi_launch import SCRIPTS, run_mpi

LINE = (r"worker {task}: {mode} loss ([\d.]+) -> ([\d.]+), global step (\d+), pushes (\d+), (\d+) of 1000 rows "
        r"changed, [\d.]+ s, table (\w+), sparse ok")


def _reports(mode):
    proc = run_mpi(SCRIPTS / "ps_sparse_job.py", 4, mode, timeout=180)
    for ps in (0, 1):
        assert f"ps {ps} joined: both workers ended" in proc.stdout, proc.stdout
    found = [re.search(LINE.format(task=task, mode=mode), proc.stdout) for task in (0, 1)]
    assert all(found), proc.stdout + proc.stderr
    return proc, found


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_partitioned_embedding_on_two_ps_tasks(mode):
    proc, found = _reports(mode)
    for f in found:  # the job checked: untouched rows equal bit for bit, each shard on its own ps task
        first, last = float(f.group(1)), float(f.group(2))
        assert last < 0.2 * first, proc.stdout
        assert 0 < int(f.group(5)) < 40, proc.stdout  # a few dozen ids of 1000: only their rows changed
    assert found[0].group(6) == found[1].group(6), proc.stdout  # both workers see the same final table
    steps, pushes = int(found[0].group(3)), sum(int(f.group(4)) for f in found)
    if mode == "async":
        assert steps == pushes == 80, proc.stdout  # every worker's own update counted once
    else:
        assert steps == 40 and pushes >= 2 * steps, proc.stdout  # each step applied 2 aggregated pushes
