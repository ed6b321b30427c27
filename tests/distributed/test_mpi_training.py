"""Data-parallel training under mpiexec: N ranks end with the weights one process gets on the concatenated
batches, every rank holds the same weights, and only rank 0 writes checkpoints."""

import numpy as np
import pytest
from mpi_launch import EXAMPLES, run_mpi

pytest.importorskip("sklearn", reason="the digits data comes from scikit-learn: pip install tensorweave[examples]")

EXAMPLE = EXAMPLES / "dist_allreduce_digits.py"


def _train(tmp_path, ranks, *extra):
    prefix = tmp_path / f"n{ranks}"
    run_mpi(EXAMPLE, ranks, "--steps", 40, "--global-batch-size", 48, "--optimizer", "momentum", "--learning-rate",
            0.05, "--logdir", "", "--quiet", "--save-weights", f"{prefix}_{{rank}}.npz", *extra,
            world_marker=f"{ranks} ranks, 40 steps")
    return [dict(np.load(f"{prefix}_{r}.npz")) for r in range(ranks)]


def test_ranks_train_like_one_process_on_the_concatenated_batches(tmp_path):
    reference = _train(tmp_path, 1)[0]
    assert set(reference) == {"hidden__kernel", "hidden__bias", "logits__kernel", "logits__bias"}
    for ranks in (2, 3):
        per_rank = _train(tmp_path, ranks)
        for rank, weights in enumerate(per_rank):
            for name, value in reference.items():
                np.testing.assert_allclose(weights[name], value, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{name} on rank {rank} of {ranks}")
                np.testing.assert_array_equal(weights[name], per_rank[0][name],
                                              err_msg=f"{name}: rank {rank} differs from rank 0")


def test_example_learns_and_only_rank_0_writes_checkpoints(tmp_path):
    logdir = tmp_path / "ckpt"
    proc = run_mpi(EXAMPLE, 2, "--steps", 150, "--logdir", logdir, "--quiet", "--compression", "fp16",
                   world_marker="2 ranks, 150 steps")
    accuracy = float(proc.stdout.split("held-out accuracy ")[1].split()[0])
    assert accuracy > 0.9, proc.stdout
    assert (logdir / "checkpoint").exists()
    assert sorted(p.name for p in logdir.glob("*.index")) == ["model.ckpt-0.index", "model.ckpt-100.index",
                                                              "model.ckpt-150.index"]
    run_mpi(EXAMPLE, 2, "--steps", 160, "--logdir", logdir, "--quiet", world_marker="2 ranks, 160 steps")
    assert (logdir / "model.ckpt-160.index").exists()
