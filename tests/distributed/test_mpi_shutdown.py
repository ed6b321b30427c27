"""A job ends tidily: what each rank posted (heartbeats, goodbyes, the last Send/Recv headers) is received or
cancelled before MPI_Finalize, so even over MPI's network path (ranks on different hosts, tested here on one
with MPIR_CVAR_NOLOCAL=1) a job ends without MPI's warnings about messages still in flight. run_mpi fails any
successful job whose stderr carries such a warning."""

import numpy as np
import pytest
from mpi_launch import EXAMPLES, NETWORK_PATH, SCRIPTS, mpi_noise, run_mpi


@pytest.mark.parametrize("ranks", [2, 3])
def test_collectives_over_the_network_path_are_right_and_end_without_mpi_warnings(ranks):
    proc = run_mpi(SCRIPTS / "collectives_job.py", ranks, env=NETWORK_PATH)
    for rank in range(ranks):
        assert f"collectives OK on rank {rank}" in proc.stdout
    assert not mpi_noise(proc), proc.stdout


def test_an_allreduce_training_job_over_the_network_path_ends_without_mpi_warnings(tmp_path):
    pytest.importorskip("sklearn", reason="the digits data comes from scikit-learn: pip install tensorweave[examples]")
    proc = run_mpi(EXAMPLES / "dist_allreduce_digits.py", 3, "--steps", 30, "--global-batch-size", 48, "--logdir",
                   "", "--quiet", "--save-weights", tmp_path / "w{rank}.npz", env=NETWORK_PATH,
                   world_marker="3 ranks, 30 steps")
    assert not mpi_noise(proc), proc.stdout
    weights = [np.load(tmp_path / f"w{rank}.npz") for rank in range(3)]
    for name in weights[0].files:
        for rank in (1, 2):
            np.testing.assert_array_equal(weights[rank][name], weights[0][name], err_msg=f"{name} on rank {rank}")
