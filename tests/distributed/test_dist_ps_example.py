"""examples/dist_ps_digits.py under mpiexec, 1 ps + 2 workers: asynchronous and synchronous (one backup
worker) training both learn the digits, and synchronous training stops at exactly the global step asked."""

import re

import pytest
from mpi_launch import EXAMPLES, run_mpi

pytest.importorskip("sklearn", reason="the digits data comes from scikit-learn: pip install tensorweave[examples]")

EXAMPLE = EXAMPLES / "dist_ps_digits.py"
STEPS = 60  # held-out accuracy measured after 60 steps: 0.89-0.95 over seeds 0-2, either mode
REPORT = r"worker (\d) \((.*?)\): (\d+) pushes, global step (\d+), final loss \S+, held-out accuracy (\S+)"


ASYNC_STEPS = 400  # an asynchronous step takes about 2 ms: long enough that the second worker joins in


def _train(*args, steps=STEPS):
    proc = run_mpi(EXAMPLE, 3, "--steps", steps, "--quiet", *args, timeout=180, world_marker="worker 0 (")
    reports = {int(m.group(1)): m for m in re.finditer(REPORT, proc.stdout)}
    assert sorted(reports) == [0, 1], f"both workers report their run:\n{proc.stdout}\n{proc.stderr}"
    return proc, reports


def test_sync_with_a_backup_worker_stops_at_the_step_asked_and_learns(tmp_path):
    proc, reports = _train("--sync", "--backup", 1, "--logdir", tmp_path / "ckpt")
    for report in reports.values():
        assert report.group(2) == "sync, 1 of 2 replicas", proc.stdout
        assert int(report.group(4)) == STEPS, proc.stdout  # each step applied once, then every worker stopped
        assert float(report.group(5)) > 0.8, proc.stdout
    assert reports[0].group(5) == reports[1].group(5), proc.stdout  # both evaluated the one model on the ps
    assert sum(int(r.group(3)) for r in reports.values()) >= STEPS, proc.stdout
    assert (tmp_path / "ckpt" / f"model.ckpt-{STEPS}.index").exists(), list((tmp_path / "ckpt").iterdir())


def test_async_workers_share_the_ps_model_and_learn():
    proc, reports = _train("--async", "--logdir", "", steps=ASYNC_STEPS)
    for report in reports.values():
        assert report.group(2) == "async", proc.stdout
        assert int(report.group(3)) > 0, proc.stdout  # both workers trained
        # a worker whose last fetched global step predated the other's pushes runs a step or two more
        assert ASYNC_STEPS <= int(report.group(4)) <= ASYNC_STEPS + 4, proc.stdout
    # every push is one global step: the worker that ended last saw them all
    assert sum(int(r.group(3)) for r in reports.values()) == max(int(r.group(4)) for r in reports.values()), \
        proc.stdout
    assert float(reports[0].group(5)) > 0.8, proc.stdout
