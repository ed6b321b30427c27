"""A rank that dies, freezes, raises or stalls makes the others fail within a bounded time with an error that
names it, and the job exits non-zero: no hang. A rank that is only slow (busy computing) is waited for."""

import re
import time

import pytest
from mpi_launch import SCRIPTS, run_mpi

JOB = SCRIPTS / "failure_job.py"
STALL = {"TENSORWEAVE_STALL_WARNING": "0.5", "TENSORWEAVE_STALL_TIMEOUT": "2"}


def _fail(mode, module=True, env=None):
    started = time.monotonic()
    proc = run_mpi(JOB, 3, mode, timeout=60, module=module, expect_ok=False, env=env)
    elapsed = time.monotonic() - started
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert elapsed < 30, f"the job took {elapsed:.1f} s to fail"
    return proc.stdout + proc.stderr


def test_a_killed_rank_takes_the_job_down(mpi_path):
    output = _fail("kill")
    assert "signal 9" in output or "Killed" in output, output


@pytest.mark.parametrize("mode", ["stop", "stop-mid"], ids=["between steps", "during a transfer"])
def test_a_frozen_rank_is_found_by_heartbeats_and_named(mode, mpi_path):
    output = _fail(mode)
    for survivor in (0, 2):
        assert f"rank {survivor} stopped at step 20" in output, output
    assert "UnavailableError: rank 1 is unavailable" in output, output


@pytest.mark.parametrize("module", [True, False], ids=["python -m mpi4py", "plain python"])
def test_an_exception_on_one_rank_aborts_the_others_naming_it(module):
    output = _fail("raise", module=module)
    assert "ValueError: rank 1 broke on purpose" in output, output
    assert "AbortedError: rank 1 failed and aborted the job" in output, output


def test_a_collective_one_rank_skips_ends_the_job_on_every_rank_naming_it_and_the_missing_rank(mpi_path):
    output = _fail("skip", env=STALL)
    # rank 0 warned first, naming who submitted what ...
    assert re.search(r"'metric': ranks 0, 2 submitted it [\d.]+ s ago; rank 1 has not", output), output
    assert re.search(r"'gradients': rank 1 submitted it [\d.]+ s ago; ranks 0, 2 have not", output), output
    # ... then every rank failed with the stalled collectives and the rank that left 'metric' out. Both
    # collectives stall (ranks 0, 2 wait in 'metric', rank 1 in 'gradients'); 'metric' is named first when both
    # pass the timeout at one check, but on a loaded machine rank 1 may still look busy then, and 'gradients'
    # (whose missing ranks are idle) is named, with 'metric' under "Also stalled".
    metric = r"collective 'metric' stalled: ranks 0, 2 submitted it [\d.]+ s ago and rank 1 has not"
    gradients = (r"collective 'gradients' stalled: rank 1 submitted it [\d.]+ s ago and ranks 0, 2 have not; .*"
                 r"Also stalled: 'metric' \(ranks 0, 2 submitted it; rank 1 has not\)")
    for rank, step in ((0, 20), (1, 21), (2, 20)):
        assert re.search(rf"rank {rank} stopped at step {step} after [\d.]+ s with AbortedError: .*(?:{metric}|"
                         rf"{gradients})", output), output
    assert re.search(r"rank 1(?: has been idle for|: idle for)", output), output
    assert "TENSORWEAVE_STALL_TIMEOUT" in output, output


def test_a_rank_that_stops_submitting_collectives_is_named():
    output = _fail("stall", env=STALL)
    assert "collective 'gradients' stalled: ranks 0, 2 submitted it" in output, output
    assert "rank 1 has been idle for" in output and "in no collective" in output, output


def test_a_rank_busy_for_longer_than_the_stall_timeout_is_waited_for():
    proc = run_mpi(JOB, 3, "busy", timeout=60, env=STALL)
    for rank in range(3):
        assert f"rank {rank} finished 40 steps" in proc.stdout, proc.stdout + proc.stderr
    # the others were told why they wait, and that rank 1 is working
    assert re.search(r"rank 1: busy \(\d+% of a core\)", proc.stderr), proc.stderr
