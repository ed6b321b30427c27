"""tf.train.Server under mpiexec: a ps task serving asynchronous and synchronous workers, and tasks that fail."""

import re
import time

import pytest
from mpi_launch import SCRIPTS, run_mpi


def test_ps_serves_two_async_workers(mpi_path):
    proc = run_mpi(SCRIPTS / "ps_server_job.py", 3, timeout=180)
    # each worker's Session.close reached the ps (TF's CloseSession), which dropped what served it
    assert "ps joined: both workers ended; sessions they closed: 2" in proc.stdout, proc.stdout
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


def test_sync_replicas_with_a_backup_worker(mpi_path):
    proc = run_mpi(SCRIPTS / "ps_sync_job.py", 3, 1, timeout=180)  # replicas_to_aggregate=1 of 2
    found = [re.search(rf"worker {task}: .* global step (\d+), pushes (\d+), w (\[.*?\]), sync ok", proc.stdout)
             for task in (0, 1)]
    assert all(found), proc.stdout
    steps, pushes = int(found[0].group(1)), sum(int(f.group(2)) for f in found)
    # each step applied the first gradient to arrive; the other, stale by then, was dropped
    assert steps < pushes, proc.stdout
    assert found[0].group(3) == found[1].group(3), proc.stdout


def test_a_failing_ps_op_fails_the_step_naming_the_ps_task_and_training_goes_on():
    proc = run_mpi(SCRIPTS / "ps_health_job.py", 3, "ps-op", timeout=120)
    assert re.search(r"worker 0: the ps op failed the step with \w+Error: .*/job:ps/task:0 \(rank 0\).*"
                     r"guard must be positive", proc.stdout), proc.stdout
    for task in (0, 1):
        assert f"/job:worker/task:{task}: trained on after the failed step" in proc.stdout, proc.stdout
    assert "ps joined: both workers ended" in proc.stdout, proc.stdout


@pytest.mark.parametrize("mode, frozen, survivors", [
    ("ps-freeze", "/job:ps/task:0 (rank 0)", ["/job:worker/task:0", "/job:worker/task:1"]),
    ("worker-freeze", "/job:worker/task:1 (rank 2)", ["/job:worker/task:0", "/job:ps/task:0"]),
], ids=["ps", "worker"])
def test_a_frozen_task_is_found_by_heartbeats_and_named_by_its_task(mode, frozen, survivors):
    started = time.monotonic()
    proc = run_mpi(SCRIPTS / "ps_health_job.py", 3, mode, timeout=90, expect_ok=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert time.monotonic() - started < 45, output  # found by heartbeats (2 s), not by a test timeout
    assert f"UnavailableError: {frozen} is unavailable" in output, output
    for survivor in survivors:
        assert re.search(rf"{re.escape(survivor)} stopped after [\d.]+ s with \w+Error: .*{re.escape(frozen)} is "
                         rf"unavailable", proc.stdout), output
