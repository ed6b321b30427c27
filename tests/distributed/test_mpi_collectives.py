"""Collectives and the transport under real mpiexec runs (the checks themselves live in scripts/*_job.py, which
fail their job with an assertion naming what went wrong)."""

import pytest
from mpi_launch import SCRIPTS, run_mpi

STALL = {"TENSORWEAVE_STALL_TIMEOUT": "30"}  # a mismatch fails the job instead of waiting for the pytest timeout


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_collectives_match_numpy_on_every_rank(ranks):
    proc = run_mpi(SCRIPTS / "collectives_job.py", ranks, env=STALL)
    for rank in range(ranks):
        assert f"collectives OK on rank {rank}" in proc.stdout
        assert f"rank {rank}: ring traffic is 2(N-1)/N of the data" in proc.stdout


@pytest.mark.parametrize("ranks", [2, 3])
def test_send_recv_between_processes_in_mpi_sessions(ranks, mpi_path):
    proc = run_mpi(SCRIPTS / "transport_job.py", ranks, env=STALL)
    for rank in range(ranks):
        assert f"transport OK on rank {rank}" in proc.stdout


def test_jobs_of_several_tasks_and_services_between_ranks(mpi_path):
    proc = run_mpi(SCRIPTS / "layout_job.py", 3, env=STALL)
    for rank in range(3):
        assert f"layout OK on rank {rank}" in proc.stdout and f"rank {rank}: services ok" in proc.stdout
