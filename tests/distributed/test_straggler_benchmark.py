"""benchmarks/straggler.py's job logic (not its timings): the seeded straggler schedule, step times from the
workers' stamps, and one short real job of 1 ps + 2 workers with a backup worker and a straggler every step."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))  # the repository root, where the benchmarks package lives
from benchmarks import straggler  # noqa: E402


def test_schedule_is_seeded_and_has_the_asked_rate_victims_and_delays():
    draws = [straggler.straggler(7, step, 3, 0.25, 0.15) for step in range(4000)]
    assert draws == [straggler.straggler(7, step, 3, 0.25, 0.15) for step in range(4000)]  # every process agrees
    assert draws != [straggler.straggler(8, step, 3, 0.25, 0.15) for step in range(4000)]
    late = [d for d in draws if d is not None]
    assert abs(len(late) / len(draws) - 0.25) < 0.03
    assert sorted({task for task, _ in late}) == [0, 1, 2]
    assert min(np.bincount([task for task, _ in late])) > len(late) / 3 * 0.8
    assert abs(np.mean([delay for _, delay in late]) - 0.15) < 0.015
    assert all(straggler.straggler(7, step, 3, 0.0, 0.15) is None for step in range(500))


def test_an_increment_is_timed_by_its_first_stamp_and_a_stamp_shows_the_steps_before_it():
    stamps = [(1, 10.0), (3, 10.5), (2, 10.2), (2, 10.3), (5, 11.0), (4, 10.6)]
    assert straggler.increment_times(stamps) == {0: 10.0, 1: 10.0, 2: 10.2, 3: 10.5, 4: 10.6, 5: 11.0}
    np.testing.assert_allclose(straggler.step_times(stamps, 1, 5), [0.2, 0.3, 0.1, 0.4])
    with pytest.raises(ValueError, match="before step 7"):
        straggler.step_times(stamps, 1, 7)


def test_configurations_pair_each_backup_count_with_a_calm_baseline():
    assert straggler.configurations(3, 0.25) == [
        ("0 backup, no straggler", 0, 0.0), ("0 backup, stragglers", 0, 0.25),
        ("1 backup, no straggler", 1, 0.0), ("1 backup, stragglers", 1, 0.25),
        ("2 backup, no straggler", 2, 0.0), ("2 backup, stragglers", 2, 0.25)]
    assert [b for _, b, _ in straggler.configurations(2, 0.25)] == [0, 0, 1, 1]  # a step needs one worker


def test_a_short_job_with_a_backup_worker_and_a_straggler_every_step():
    pytest.importorskip("mpi4py", reason="the job runs under mpiexec: pip install tensorweave[distributed]")
    if not (Path(sys.executable).parent / "mpiexec").exists():
        pytest.skip(f"no mpiexec next to {sys.executable}: pip install tensorweave[distributed] (the mpich wheel)")
    job = straggler.launch(workers=2, aggregate=1, probability=1.0, steps=16, mean_delay=0.02, seed=3, timeout=120)
    assert len(job["times"]) == 16 - 4  # steps 4..16 (the first quarter left out as warm-up)
    assert all(t >= 0 for t in job["times"]) and sum(job["times"]) > 0
    first = straggler.straggler(3, 0, 2, 1.0, 0.02)  # every worker computes step 0: its straggler slept
    assert job["slept"] >= first[1] > 0
