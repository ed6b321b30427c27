"""Stall detection on the coordinator (rank 0): collectives some ranks submitted and others have not.

A missing rank may be busy on its way to the collective (a long step, its first step's compilation, an
evaluation only the chief runs) or never coming (it left the collective out, sleeps, waits on a lock or a
queue, or waits in another collective the others never run). What tells them apart is whether it works: each
rank's heartbeats carry the CPU seconds its threads used outside the MPI thread (which polls even while the rank
waits), and a rank that used less than ``BUSY_FRACTION`` of a core since its previous heartbeat counts as idle.

After ``stall_warning`` seconds (and again every ``stall_warning``) rank 0 logs the stalled collectives, who
submitted each, and what each missing rank is doing. A collective whose missing ranks have all been idle for
``stall_timeout`` seconds (and which has waited that long) fails the job on every rank with AbortedError naming
it and them. A rank that keeps working is waited for. 0 or less turns either off.
"""

import logging
import time

from tensorweave import errors

_log = logging.getLogger("tensorweave_distributed")

BUSY_FRACTION = 0.1  # of one core, between two heartbeats


def cpu_outside_this_thread():
    """CPU seconds this process used in threads other than the calling one (the MPI thread calls it); None where
    the platform cannot say."""
    try:
        return time.process_time() - time.thread_time()
    except (AttributeError, OSError):
        return None


class Activity:
    """When each rank was last busy, from the CPU seconds it reports (arrival times on this rank's clock)."""

    def __init__(self, size, now):
        self._last_busy = [now] * size
        self._previous = [None] * size
        self.fraction = [None] * size  # of a core, over the latest interval

    def report(self, rank, cpu_seconds, now):
        if cpu_seconds is None:
            return
        previous, self._previous[rank] = self._previous[rank], (now, cpu_seconds)
        if previous is None or now <= previous[0]:
            return
        self.fraction[rank] = max(0.0, cpu_seconds - previous[1]) / (now - previous[0])
        if self.fraction[rank] >= BUSY_FRACTION:
            self._last_busy[rank] = now

    def idle_for(self, rank, now):
        return now - self._last_busy[rank]

    def busy(self, rank):
        return self.fraction[rank] is not None and self.fraction[rank] >= BUSY_FRACTION


class StallCheck:
    """Run by the coordinator every ``period`` seconds; ``waiting(now)`` lists the stalled collectives as
    (name, seconds waited, ranks that submitted it, ranks that have not), longest first."""

    def __init__(self, world, waiting, clock=time.monotonic, own_cpu=cpu_outside_this_thread):
        self.world = world
        self.settings = world.settings
        self._waiting = waiting
        self.clock = clock
        self._own_cpu = own_cpu
        self.activity = Activity(world.size, clock())
        self._last_warning = float("-inf")
        limits = [t for t in (self.settings.stall_warning, self.settings.stall_timeout) if t > 0]
        self.period = max(0.05, min([1.0] + [t / 4 for t in limits]))

    def on_heartbeat(self, source, cpu_seconds):
        self.activity.report(source, cpu_seconds, self.clock())

    def check(self):
        now = self.clock()
        self.activity.report(self.world.rank, self._own_cpu(), now)
        stalled = self._waiting(now)
        if not stalled:
            self._last_warning = float("-inf")
            return
        timeout, warning = self.settings.stall_timeout, self.settings.stall_warning
        if timeout > 0:
            # In a deadlock several collectives stall at once; name the one the fewest ranks left out: the
            # ranks that skipped it are the likely culprits (the others wait in it for them).
            for name, waited, have, missing in sorted(stalled, key=lambda entry: len(entry[3])):
                if waited >= timeout and min(self.activity.idle_for(r, now) for r in missing) >= timeout:
                    self.world.fail(errors.AbortedError(None, None, self._error(name, stalled, now)), failed=False)
                    return
        if warning > 0 and now - self._last_warning >= warning:
            due = [entry for entry in stalled if entry[1] >= warning]
            if due:
                self._last_warning = now
                _log.warning("%s", self._warning(due, stalled, now))

    # ---- messages ---------------------------------------------------------------------------------
    def _warning(self, due, stalled, now):
        lines = ["tensorweave_distributed: collectives wait for ranks that have not submitted them:"]
        lines += [f"  {name!r}: {self._ranks(have)} submitted it {waited:.1f} s ago; {self._ranks(missing)} "
                  f"ha{'ve' if len(missing) > 1 else 's'} not" for name, waited, have, missing in due]
        for rank in sorted({r for entry in due for r in entry[3]}):
            lines.append(f"  {self.world.describe(rank)}: {self._state(rank, stalled, now)}")
        timeout = self.settings.stall_timeout
        lines.append("Every rank must run the same collectives; one that a rank leaves out (a fetch or a branch that "
                     "differs by rank) leaves the others waiting. "
                     + (f"The job is aborted once a collective's missing ranks have all been idle for {timeout:g} s "
                        f"(stall_timeout); a busy rank is waited for." if timeout > 0 else
                        "stall_timeout is off: the job waits for ever."))
        return "\n".join(lines)

    def _error(self, name, stalled, now):
        entry = next(e for e in stalled if e[0] == name)
        _, waited, have, missing = entry
        states = "; ".join(f"{self.world.describe(r)} has been idle for {self.activity.idle_for(r, now):.1f} s "
                           f"({self._where(r, stalled)})" for r in missing)
        others = [f"{n!r} ({self._ranks(h)} submitted it; {self._ranks(m)} ha{'ve' if len(m) > 1 else 's'} not)"
                  for n, _, h, m in stalled if n != name]
        timeout = self.settings.stall_timeout
        return (f"collective {name!r} stalled: {self._ranks(have)} submitted it {waited:.1f} s ago and "
                f"{self._ranks(missing)} ha{'ve' if len(missing) > 1 else 's'} not; {states}. "
                + (f"Also stalled: {', '.join(others)}. " if others else "")
                + "Every rank must run the same collectives: one that a rank leaves out (a fetch or a branch that "
                  f"differs by rank) leaves the others waiting. Stall timeout {timeout:g} s: if "
                  f"{self._ranks(missing)} {'are' if len(missing) > 1 else 'is'} legitimately slow, raise it with "
                  f"init(stall_timeout=...) or TENSORWEAVE_STALL_TIMEOUT (0 turns the check off).")

    def _state(self, rank, stalled, now):
        """What a missing rank is doing: busy, or idle and where it waits."""
        if self.activity.busy(rank):
            return f"busy ({self.activity.fraction[rank]:.0%} of a core)"
        return f"idle for {self.activity.idle_for(rank, now):.1f} s, {self._where(rank, stalled)}"

    def _where(self, rank, stalled):
        waits = [(name, missing) for name, _, have, missing in stalled if rank in have]
        if not waits:
            return "in no collective"
        return "waiting in " + ", ".join(f"{n!r}, which {self._ranks(m)} ha{'ve' if len(m) > 1 else 's'} not "
                                         f"submitted" for n, m in waits)

    def _ranks(self, ranks):
        if any(r in self.world.task_names for r in ranks):
            return ", ".join(self.world.describe(r) for r in ranks)
        return f"rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))}"
