"""The stall check on the coordinator, on a clock the test moves (no mpiexec): on by default, it fails the job
once a collective's missing ranks have been idle for ``stall_timeout``, waits for a missing rank that is busy,
warns first, and is off at 0 or less. Real jobs: test_mpi_failures.py."""

import logging

import pytest

from tensorweave_distributed.negotiation import Coordinator
from tensorweave_distributed.settings import Settings, from_environment


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class World:
    """What the coordinator needs of a 3-rank world; ``failures`` records ``fail``."""

    rank, size = 0, 3

    def __init__(self, settings):
        self.settings = settings
        self.task_names = {}
        self.failures = []
        self.engine = self

    def add_periodic(self, period, fn):
        pass

    def describe(self, rank):
        task = self.task_names.get(rank)
        return f"{task} (rank {rank})" if task else f"rank {rank}"

    def fail(self, error, notify=True, failed=True):
        self.failures.append((error, failed))


def _coordinator(settings):
    clock, world = Clock(), World(settings)
    coordinator = Coordinator(world, lambda batches: None, clock)
    coordinator.stalls._own_cpu = lambda: None
    return coordinator, world, clock


def _run(coordinator, clock, seconds, busy=(), step=1.0):
    """Moves the clock ``seconds`` in heartbeat steps: ranks in ``busy`` report a full core, the others nothing."""
    cpu = getattr(coordinator, "_test_cpu", {1: 0.0, 2: 0.0})
    for _ in range(int(seconds / step)):
        clock.now += step
        for rank in (1, 2):
            cpu[rank] += step if rank in busy else 0.0
            coordinator.stalls.on_heartbeat(rank, cpu[rank])
        coordinator.stalls.check()
    coordinator._test_cpu = cpu


def _descriptor():
    return ("allreduce", (("<f4", (4,)),), "sum", 0, "auto", "none")


def test_stall_detection_is_on_by_default_and_set_by_init_or_the_environment(monkeypatch):
    assert Settings().stall_warning == 60 and Settings().stall_timeout == 300
    assert from_environment().stall_timeout == 300
    monkeypatch.setenv("TENSORWEAVE_STALL_TIMEOUT", "45")
    assert from_environment().stall_timeout == 45 and from_environment(stall_timeout=7).stall_timeout == 7


def test_by_default_a_collective_a_rank_left_out_fails_the_job_naming_it_and_the_rank(caplog):
    coordinator, world, clock = _coordinator(Settings())
    _run(coordinator, clock, 10, busy=(1, 2))  # the first steps: every rank working
    coordinator.announce(0, [("metric", _descriptor())])
    coordinator.announce(2, [("metric", _descriptor())])
    coordinator.announce(1, [("gradients", _descriptor())])  # rank 1 left 'metric' out and went on
    with caplog.at_level(logging.WARNING, "tensorweave_distributed"):
        _run(coordinator, clock, 59)
        assert not caplog.records and not world.failures
        _run(coordinator, clock, 2)
    warning = caplog.records[0].getMessage()
    assert "'metric': ranks 0, 2 submitted it 60.0 s ago; rank 1 has not" in warning, warning
    assert "rank 1: idle for 60.0 s, waiting in 'gradients', which ranks 0, 2 have not submitted" in warning, warning
    _run(coordinator, clock, 237)
    assert not world.failures
    _run(coordinator, clock, 2)
    (error, failed), = world.failures
    assert not failed  # rank 0 found the job's failure; it did not fail itself
    message = str(error)
    assert message.startswith("collective 'metric' stalled: ranks 0, 2 submitted it 300.0 s ago and rank 1 has "
                              "not; rank 1 has been idle for 300.0 s (waiting in 'gradients'"), message
    assert "init(stall_timeout=...) or TENSORWEAVE_STALL_TIMEOUT" in message, message


def test_a_missing_rank_that_is_busy_is_waited_for_and_its_idle_time_counts_from_when_it_stopped(caplog):
    coordinator, world, clock = _coordinator(Settings(stall_warning=60, stall_timeout=300))
    coordinator.announce(0, [("gradients", _descriptor())])
    coordinator.announce(2, [("gradients", _descriptor())])
    with caplog.at_level(logging.WARNING, "tensorweave_distributed"):
        _run(coordinator, clock, 1000, busy=(1,))  # rank 1 evaluates, or compiles its first step, for 1000 s
    assert not world.failures
    assert "rank 1: busy (100% of a core)" in caplog.records[0].getMessage()
    assert len(caplog.records) == 16  # every stall_warning seconds while it waits
    _run(coordinator, clock, 298)  # then it stops working, and never submits
    assert not world.failures
    _run(coordinator, clock, 2)
    assert "rank 1 has been idle for 300.0 s (in no collective)" in str(world.failures[0][0])


@pytest.mark.parametrize("timeout", [0, -1])
def test_a_timeout_of_zero_or_less_turns_the_abort_off(timeout):
    coordinator, world, clock = _coordinator(Settings(stall_timeout=timeout))
    coordinator.announce(0, [("gradients", _descriptor())])
    _run(coordinator, clock, 3600, step=10)
    assert not world.failures


def test_ranks_of_a_cluster_are_named_by_their_task():
    coordinator, world, clock = _coordinator(Settings(stall_timeout=5))
    world.task_names = {0: "/job:ps/task:0", 1: "/job:worker/task:0", 2: "/job:worker/task:1"}
    coordinator.announce(0, [("start", _descriptor())])
    coordinator.announce(1, [("start", _descriptor())])
    _run(coordinator, clock, 6)
    assert str(world.failures[0][0]).startswith(
        "collective 'start' stalled: /job:ps/task:0 (rank 0), /job:worker/task:0 (rank 1) submitted it 5.0 s ago and "
        "/job:worker/task:1 (rank 2) has not")
