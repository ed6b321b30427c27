"""Every test here needs mpi4py (and most a real mpiexec: see mpi_launch.py).

``mpi_path``: a test that uses it runs twice, over shared memory (ranks on one host) and over MPI's network path
(``MPIR_CVAR_NOLOCAL=1``: MPICH carries even local traffic as between hosts), so multi-host behaviour is tested
without a second host. ``-k "not network"`` leaves the second run out."""

import pytest
from mpi_launch import NETWORK_PATH

pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install tensorweave[distributed]")


@pytest.fixture(params=["shm", "network"])
def mpi_path(request, monkeypatch):
    if request.param == "network":
        for name, value in NETWORK_PATH.items():
            monkeypatch.setenv(name, value)  # mpiexec hands it to every rank
    return request.param
