"""The progress engine: the one thread of a process that makes MPI calls.

Everything else hands it work (``call``) and gets callbacks. Nothing on it blocks in MPI: messages are
non-blocking requests it polls, and multi-step algorithms are generators that yield the requests they wait
for (``spawn``), so a dead peer can never wedge the thread that must notice it. While a collective runs
(every rank is in it) it polls densely; while other work waits on the network it polls for
``spin_seconds`` after the last progress, then sleeps briefly between polls; with nothing outstanding it
sleeps until woken or the next poll. Polling yields the core now and then, since ranks may share cores.
When it stops, it cancels the requests still posted (a peer that never answered) and runs ``on_stop``.
"""

import collections
import logging
import os
import threading
import time
import traceback

from mpi4py import MPI

_log = logging.getLogger("tensorweave_distributed")

IDLE_POLL_SECONDS = 0.002  # how often an idle engine looks for incoming messages
HOT_POLL_SECONDS = 0.0005  # how long a running collective's requests are polled before other work is looked at
POLLS_BEFORE_YIELD = 32


class _Group:
    __slots__ = ("remaining", "callback")

    def __init__(self, remaining, callback):
        self.remaining = remaining
        self.callback = callback


class _Task:
    """One generator driven by the engine (a class, not a closure: a self-referencing closure would keep
    the results alive until the garbage collector runs, and their buffers could not be reused)."""

    __slots__ = ("engine", "generator", "done")

    def __init__(self, engine, generator, done):
        self.engine = engine
        self.generator = generator
        self.done = done

    def advance(self):
        try:
            requests = next(self.generator)
        except StopIteration as stop:
            done, self.done, self.generator = self.done, None, None
            done(None, stop.value)
        except BaseException as e:  # the algorithm failed: its caller decides
            done, self.done, self.generator = self.done, None, None
            done(e, None)
        else:
            self.engine.watch(requests, self.advance)


class Engine:
    def __init__(self, spin_seconds=0.002, name="tensorweave-mpi", on_stop=None):
        self._inbox = collections.deque()
        self._wake = threading.Event()
        self._requests = []
        self._groups = []
        self._pollers = []
        self._busy_checks = []
        self._periodic = []  # [period, next_due, fn]
        self._spin_seconds = spin_seconds
        self.hot = 0  # collectives running now: every rank is in them, so poll densely
        self._stopping = False
        self._on_stop = on_stop
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.ident = None

    # ---- set-up and any thread -----------------------------------------------------------------
    def start(self):
        self._thread.start()

    def on_thread(self):
        return threading.get_ident() == self.ident

    def call(self, fn, *args):
        """Runs ``fn(*args)`` on the engine thread, soon (in call order)."""
        self._inbox.append((fn, args))
        self._wake.set()

    def call_and_wait(self, fn, *args, timeout=30.0, what="an MPI operation"):
        """Runs ``fn(*args)`` on the engine and returns its result; bounded by ``timeout``."""
        if self.on_thread():
            return fn(*args)
        box, done = [], threading.Event()

        def run():
            try:
                box.append((True, fn(*args)))
            except BaseException as e:  # handed back to the caller
                box.append((False, e))
            done.set()

        self.call(run)
        if not done.wait(timeout):
            raise TimeoutError(f"{what} did not finish within {timeout} s: the MPI thread is stuck or stopped")
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def add_poller(self, fn):
        """``fn()`` runs every turn and returns True when it did something (received a message)."""
        self._pollers.append(fn)

    def add_busy_check(self, fn):
        """``fn()`` says whether local work waits on the network (keeps the engine polling fast)."""
        self._busy_checks.append(fn)

    def add_periodic(self, period, fn):
        self._periodic.append([period, time.monotonic() + period, fn])

    def stop(self, timeout=5.0):
        """Stops the thread after the current turn (outstanding requests are abandoned)."""
        self._stopping = True
        self._wake.set()
        if self._thread.is_alive() and not self.on_thread():
            self._thread.join(timeout)

    def outstanding(self):
        """How many requests are posted and not complete (engine thread)."""
        return len(self._requests)

    @property
    def running(self):
        return self._thread.is_alive() and not self._stopping

    # ---- engine thread only --------------------------------------------------------------------
    def watch(self, requests, callback):
        """Calls ``callback()`` once every request in ``requests`` has completed."""
        requests = [r for r in requests if r is not None]
        if not requests:
            self.call(callback)
            return
        group = _Group(len(requests), callback)
        self._requests.extend(requests)
        self._groups.extend([group] * len(requests))

    def spawn(self, generator, done):
        """Drives ``generator``: each value it yields is a list of requests to wait for before it resumes;
        ``done(error, result)`` gets its return value or the exception it raised."""
        _Task(self, generator, done).advance()

    def _turn(self):
        worked = False
        inbox = self._inbox
        while inbox:
            fn, args = inbox.popleft()
            self._guard(fn, *args)
            worked = True
        if self._requests:
            indices = MPI.Request.Testsome(self._requests)
            if not indices and self.hot:  # a transfer in progress moves only inside MPI calls: call densely
                until = time.perf_counter() + HOT_POLL_SECONDS
                polls = 0
                while not indices and time.perf_counter() < until:
                    indices = MPI.Request.Testsome(self._requests)
                    polls += 1
                    if polls % POLLS_BEFORE_YIELD == 0:
                        os.sched_yield()  # the peer it waits for may need this core
            if indices:
                worked = True
                finished = set(indices)
                ready = []
                for i in indices:
                    group = self._groups[i]
                    group.remaining -= 1
                    if group.remaining == 0:
                        ready.append(group.callback)
                self._requests = [r for i, r in enumerate(self._requests) if i not in finished]
                self._groups = [g for i, g in enumerate(self._groups) if i not in finished]
                for callback in ready:
                    self._guard(callback)
        for poll in self._pollers:
            if self._guard(poll):
                worked = True
        return worked

    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except Exception:  # a broken callback must not stop the thread every rank depends on
            _log.error("tensorweave_distributed: error on the MPI thread:\n%s", traceback.format_exc())
            return False

    def _busy(self):
        return bool(self._requests) or any(check() for check in self._busy_checks)

    def _run(self):
        self.ident = threading.get_ident()
        last_progress = time.monotonic()
        while not self._stopping:
            worked = self._turn()
            now = time.monotonic()
            for entry in self._periodic:
                if now >= entry[1]:
                    entry[1] = now + entry[0]
                    self._guard(entry[2])
            if worked:
                last_progress = now
                continue
            quiet = now - last_progress
            if self.hot:
                continue
            if self._busy():
                if quiet < self._spin_seconds:
                    os.sched_yield()  # poll on, but let a rank that shares this core run first
                    continue
                timeout = 0.00005 if quiet < 50 * self._spin_seconds else 0.0005
            else:
                timeout = IDLE_POLL_SECONDS
            self._wake.wait(timeout)
            self._wake.clear()
        self._close()

    def _close(self, patience=0.5):
        """Cancels what is still posted and waits (``patience`` at most) for the cancellations to complete, so
        MPI_Finalize finds none of our receives open; then ``on_stop``."""
        requests = self._requests
        for request in requests:
            try:
                request.Cancel()
            except MPI.Exception:
                pass  # complete already, or not cancellable: tested below all the same
        deadline = time.monotonic() + patience
        while requests and time.monotonic() < deadline:
            done = MPI.Request.Testsome(requests)
            if done is None:  # every one complete (and freed)
                requests = []
            elif done:
                finished = set(done)
                requests = [r for i, r in enumerate(requests) if i not in finished]
            else:
                time.sleep(0.001)
        if requests:
            _log.debug("tensorweave_distributed: %d MPI requests still open at shutdown", len(requests))
        self._requests, self._groups = [], []
        if self._on_stop is not None:
            self._guard(self._on_stop)
