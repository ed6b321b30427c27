"""Threads for the partitions of running steps: a partition never waits for a thread.

A partition's run holds its thread until the partition ends, and it may wait that long on another
partition of its step (a Recv) or on another step (a queue, an accumulator, a token). In a bounded pool
every thread can be held by such waits while the partition that would end them sits in the pool's queue,
and then every step waits forever. So each partition starts at once, on an idle thread or a new one, as
TF's executors all start at once (asynchronously) for the same reason. Idle threads retire after a while.
"""

import queue
import threading
from concurrent.futures import Future

from tensorweave import errors

IDLE_SECONDS = 30.0  # how long an idle thread waits for another partition before it ends


class PartitionThreads:
    """``submit(fn, *args)`` runs ``fn`` now on its own thread and returns a ``Future``."""

    def __init__(self, name="tensorweave-partition"):
        self._name = name
        self._lock = threading.Lock()
        self._idle = []  # the hand-off queues of idle threads, the last one idle first
        self._closed = False

    def submit(self, fn, *args):
        future = Future()
        with self._lock:
            if self._closed:
                raise errors.CancelledError(None, None, "the Session was closed while this step was starting")
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name=self._name, daemon=True).start()
        inbox.put((fn, args, future))
        return future

    def shutdown(self):
        """Ends the idle threads; busy ones end when their partition does."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for inbox in idle:
            inbox.put(None)

    def _serve(self, inbox):
        while True:
            try:
                task = inbox.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:
                        self._idle.remove(inbox)
                        return
                task = inbox.get()  # ``submit`` took this thread just as it timed out: its task is coming
            if task is None:
                return
            fn, args, future = task
            task = result = error = None
            running = future.set_running_or_notify_cancel()
            if running:
                try:
                    result = fn(*args)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
                    error = exc
            fn = args = None
            with self._lock:
                closed = self._closed
                if not closed:
                    self._idle.append(inbox)  # idle before the caller hears: its next partition finds this thread
            if running:
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(result)
            future = result = error = None
            if closed:
                return
