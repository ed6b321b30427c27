"""What the iterators of one initialization of an iterator resource share: a closed flag, their background
threads, and waiting. A consumer waits for its producer on a condition; the wait fails with CancelledError
when the pipeline is closed (the iterator re-initialized, its session closed) or the step that asked for
the element is cancelled, so nothing blocks a closing session and no thread outlives its pipeline."""

import threading
import time
import weakref

from tensorweave.extension import errors

THREAD_PREFIX = "tensorweave-data"
_POLL_SECONDS = 0.1
_JOIN_SECONDS = 1.0  # a thread still inside user code (a blocking generator) then ends when that code returns


class Pipeline:
    def __init__(self, name):
        self.name = name
        self.closed = False
        self._lock = threading.Lock()
        self._threads = []
        self._conditions = weakref.WeakSet()
        self._local = threading.local()

    def condition(self):
        """A Condition this pipeline notifies when it closes (so its waiters wake at once)."""
        cond = threading.Condition()
        self._conditions.add(cond)
        return cond

    def start(self, target, what):
        """Runs ``target()`` on a daemon thread of this pipeline (joined when it closes)."""
        thread = threading.Thread(target=target, name=f"{THREAD_PREFIX}-{what}", daemon=True)
        with self._lock:
            self.check_open()
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def check_open(self):
        if self.closed:
            raise errors.CancelledError(None, None, f"iterator {self.name!r} was closed (re-initialized, or its "
                                                    f"session closed) while computing an element")

    def check(self):
        """Raises if the pipeline closed or the step waiting for this thread's element was cancelled."""
        self.check_open()
        cancellation = getattr(self._local, "cancellation", None)
        if cancellation is not None and cancellation.is_cancelled:
            raise cancellation.error

    def wait(self, cond, ready):
        """Waits (holding ``cond``) until ``ready()``, checking for closing and cancellation."""
        while not ready():
            self.check()
            cond.wait(_POLL_SECONDS)

    def serve(self, iterator, cancellation):
        """``iterator.next()`` on this thread for a step with ``cancellation`` (which its waits then check)."""
        local = self._local
        local.cancellation = cancellation
        try:
            return iterator.next()
        finally:
            local.cancellation = None

    def close(self):
        """Stops every background thread: waits wake and fail, threads finish and are joined."""
        with self._lock:
            self.closed = True
            threads, self._threads = self._threads, []
        for cond in list(self._conditions):
            with cond:
                cond.notify_all()
        me, deadline = threading.current_thread(), time.monotonic() + _JOIN_SECONDS
        for thread in threads:
            if thread is not me:
                thread.join(max(deadline - time.monotonic(), 0))


class Failure:
    """An error computed in place of an element; handed to the consumer in the element's turn."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error
