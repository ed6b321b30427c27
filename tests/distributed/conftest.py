"""Every test here needs mpi4py (and most a real mpiexec: see mpi_launch.py)."""

import pytest

pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install tensorweave[distributed]")
