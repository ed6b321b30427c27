"""Threads for tests that block on purpose: each runs as a daemon and is joined with a deadline, so a
regression fails the test instead of hanging the run."""

import threading


class Worker(threading.Thread):
    """Runs ``fn(*args)`` and keeps its result or exception."""

    def __init__(self, fn, *args):
        super().__init__(daemon=True)
        self._fn, self._args = fn, args
        self.result = self.error = None

    def run(self):
        try:
            self.result = self._fn(*self._args)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            self.error = e

    def finish(self, timeout=10.0):
        """Joins; fails the test if the thread is still blocked, re-raises what it raised."""
        self.join(timeout)
        assert not self.is_alive(), f"thread running {self._fn!r} is still blocked after {timeout} s"
        if self.error is not None:
            raise self.error
        return self.result


def start(fn, *args):
    worker = Worker(fn, *args)
    worker.start()
    return worker
