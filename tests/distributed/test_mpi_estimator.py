"""tf.estimator under mpiexec, as Horovod's Estimator examples run: the ranks train one model data-parallel (the
weights are those one process gets on the concatenated batches) and only rank 0 writes into its model_dir."""

import json

import numpy as np
from mpi_launch import SCRIPTS, run_mpi


def _reports(proc):
    return {r["rank"]: r for r in (json.loads(line[len("REPORT "):]) for line in proc.stdout.splitlines()
                                   if line.startswith("REPORT "))}


def _one_process_reference(steps, ranks):
    """Gradient descent on the MSE of the union of each rank's batch at every step (what averaged gradients give)."""
    x = np.linspace(-1, 1, 16 * 3, dtype=np.float64).reshape(16, 3)
    y = x @ np.array([[1.0], [-2.0], [0.5]]) + 0.25
    shards = [(x[r * 16 // ranks:(r + 1) * 16 // ranks], y[r * 16 // ranks:(r + 1) * 16 // ranks])
              for r in range(ranks)]
    w, b = np.full((3, 1), 0.1), np.zeros(1)
    for step in range(steps):
        grads_w, grads_b = [], []
        for xs, ys in shards:
            rows = [(step * 4 + i) % len(xs) for i in range(4)]
            err = xs[rows] @ w + b - ys[rows]
            grads_w.append(2 * xs[rows].T @ err / 4)
            grads_b.append(2 * err.sum(0) / 4)
        w, b = w - 0.2 * np.mean(grads_w, 0), b - 0.2 * np.mean(grads_b, 0)
    return w.ravel(), b


def test_estimator_trains_data_parallel_and_only_rank_0_writes(tmp_path):
    model_dir = tmp_path / "model"
    proc = run_mpi(SCRIPTS / "estimator_job.py", 2, model_dir, 12)
    reports = _reports(proc)
    assert sorted(reports) == [0, 1], proc.stdout
    chief, other = reports[0], reports[1]
    assert chief["model_dir"] == str(model_dir) and chief["global_step"] == 12
    assert {"model.ckpt-0.index", "model.ckpt-5.index", "model.ckpt-10.index", "model.ckpt-12.index",
            "checkpoint"} <= set(chief["files"])
    assert any(f.startswith("events.out.tfevents.") for f in chief["files"])
    assert other["model_dir"] != str(model_dir) and other["files"] == []  # a temporary model_dir, left empty
    assert "Using temporary folder as model directory" in proc.stderr
    w, b = _one_process_reference(12, 2)
    np.testing.assert_allclose(chief["w"], w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(chief["b"], b, rtol=1e-5, atol=1e-6)
