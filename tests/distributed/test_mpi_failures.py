"""A rank that dies, freezes, raises or stalls makes the others fail within a bounded time with an error that
names it, and the job exits non-zero: no hang."""

import time

import pytest
from mpi_launch import SCRIPTS, run_mpi

JOB = SCRIPTS / "failure_job.py"


def _fail(mode, module=True):
    started = time.monotonic()
    proc = run_mpi(JOB, 3, mode, timeout=60, module=module, expect_ok=False)
    elapsed = time.monotonic() - started
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert elapsed < 30, f"the job took {elapsed:.1f} s to fail"
    return proc.stdout + proc.stderr


def test_a_killed_rank_takes_the_job_down():
    output = _fail("kill")
    assert "signal 9" in output or "Killed" in output, output


@pytest.mark.parametrize("mode", ["stop", "stop-mid"], ids=["between steps", "during a transfer"])
def test_a_frozen_rank_is_found_by_heartbeats_and_named(mode):
    output = _fail(mode)
    for survivor in (0, 2):
        assert f"rank {survivor} stopped at step 20" in output, output
    assert "UnavailableError: rank 1 is unavailable" in output, output


@pytest.mark.parametrize("module", [True, False], ids=["python -m mpi4py", "plain python"])
def test_an_exception_on_one_rank_aborts_the_others_naming_it(module):
    output = _fail("raise", module=module)
    assert "ValueError: rank 1 broke on purpose" in output, output
    assert "AbortedError: rank 1 failed and aborted the job" in output, output


def test_a_stalled_collective_names_the_missing_rank():
    output = _fail("stall")
    assert "ranks [0, 2] submitted it, ranks [1] have not" in output, output
