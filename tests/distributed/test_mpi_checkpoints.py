"""Checkpoints under mpiexec: every rank handed the same MonitoredTrainingSession(checkpoint_dir=...) leaves
the writing to the chief (TF1's rule), so the directory holds only the chief's checkpoints and summaries and a
restarted job resumes from them; ranks that all insist on being the chief fail at the first save, loudly."""

import re

import numpy as np
from mpi_launch import SCRIPTS, run_mpi

import tensorweave as tf

JOB = SCRIPTS / "checkpoint_job.py"


def _pids(stdout):
    return {int(rank): int(pid) for rank, pid in re.findall(r"rank (\d+) is pid (\d+)", stdout)}


def test_only_the_chief_writes_into_a_checkpoint_dir_every_rank_was_given(tmp_path):
    directory = tmp_path / "ckpt"
    proc = run_mpi(JOB, 3, directory, 40, "default")
    state = tf.train.get_checkpoint_state(str(directory))
    assert state.all_model_checkpoint_paths == [str(directory / f"model.ckpt-{s}") for s in range(20, 41, 5)]
    for prefix in state.all_model_checkpoint_paths:
        np.testing.assert_array_equal(tf.train.load_variable(prefix, "w"), np.full(1000, float(prefix.rsplit("-")[-1])),
                                      err_msg=f"{prefix} was not written by the chief (rank 0)")
    assert tf.train.latest_checkpoint(str(directory)) == str(directory / "model.ckpt-40")
    events = [p.name for p in directory.glob("events.out.tfevents.*")]
    assert events and all(name.split(".")[-2] == str(_pids(proc.stdout)[0]) for name in events), events

    proc = run_mpi(JOB, 3, directory, 45, "default")
    for rank in range(3):
        assert f"rank {rank} starts at global step 40" in proc.stdout, proc.stdout
    assert tf.train.latest_checkpoint(str(directory)) == str(directory / "model.ckpt-45")


def test_ranks_that_all_claim_to_be_the_chief_fail_at_the_first_save_naming_the_writer(tmp_path):
    directory = tmp_path / "ckpt"
    proc = run_mpi(JOB, 3, directory, 40, "every-rank-chief", expect_ok=False)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    match = re.search(r"AlreadyExistsError: cannot save checkpoint .*? are being written by pid (\d+)", output)
    assert match, output
    assert int(match.group(1)) in _pids(proc.stdout).values()
    for prefix in tf.train.get_checkpoint_state(str(directory)).all_model_checkpoint_paths:
        tf.train.NewCheckpointReader(prefix).verify()
