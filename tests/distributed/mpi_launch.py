"""Launching real MPI jobs from pytest: the venv's mpiexec, this interpreter, ``-m mpi4py``, a timeout, the
world size each job asserts (a wrong launcher silently runs N copies of rank 0), and a job that succeeds saying
nothing from MPI itself (such as UCX's warnings about messages still in flight at MPI_Finalize, which UCX
writes to stdout)."""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

MPIEXEC = Path(sys.executable).parent / "mpiexec"
SCRIPTS = Path(__file__).parent / "scripts"
EXAMPLES = Path(__file__).parents[2] / "examples"
NETWORK_PATH = {"MPIR_CVAR_NOLOCAL": "1"}  # MPICH sends between ranks of one host as between hosts
MPI_NOISE = re.compile(r"UCX +(WARN|ERROR)|was not matched|Fatal error in|MPIDI?_|MPIR_\w+\(|Assertion failed")


def mpi_noise(proc):
    """The lines of a job's output that MPI or UCX wrote (warnings, errors), joined; "" when there are none."""
    return "\n".join(line for line in (proc.stdout + proc.stderr).splitlines() if MPI_NOISE.search(line))


def run_mpi(script, ranks, *args, timeout=120, env=None, launcher=(), module=True, expect_ok=True, world_marker=None):
    """Runs ``script`` on ``ranks`` ranks; returns the CompletedProcess (output in .stdout/.stderr).

    A job that succeeds must have printed ``world_marker`` (default: each rank's "world size N ok on rank r",
    from scripts/mpi_common.py), so the world size it saw is checked."""
    if not MPIEXEC.exists():
        pytest.skip(f"no mpiexec next to {sys.executable}: pip install tensorweave[distributed] (the mpich wheel)")
    command = [str(MPIEXEC), *launcher, "-n", str(ranks), sys.executable, *(("-m", "mpi4py") if module else ()),
               str(script), *map(str, args)]
    environment = dict(os.environ, TW_TEST_WORLD_SIZE=str(ranks), PYTHONUNBUFFERED="1", **(env or {}))
    proc = run_job(command, timeout, environment)
    if expect_ok and proc.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    if expect_ok:
        markers = [world_marker] if world_marker else [f"world size {ranks} ok on rank {r}" for r in range(ranks)]
        for marker in markers:
            assert marker in proc.stdout, f"the job did not report the world size it was launched with:\n{proc.stdout}"
        noise = mpi_noise(proc)
        assert not noise, f"the job succeeded, but MPI complained:\n{noise}\n\n{proc.stdout}\n{proc.stderr}"
    return proc


def run_job(command, timeout, env):
    """Runs ``command`` in a process group of its own; a hang fails the test and kills the whole job (mpiexec's
    ranks included), so no rank is left spinning under the tests that follow."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{' '.join(command)} did not finish in {timeout} s (a hang):\n{stdout}\n{stderr}")
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
