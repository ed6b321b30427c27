"""Writes Event protos to an ``events.out.tfevents.*`` file on a background thread.

Events are serialized when they are added (a caller may reuse its proto), queued (``max_queue``, so a
slow disk slows the producer rather than growing memory), written as whole records, flushed every
``flush_secs`` and on ``flush()``, and synced to disk on ``close()``. An error on the writing thread is
raised by the next call. Writers still open when Python exits are flushed and closed then.
"""

import atexit
import itertools
import os
import queue
import socket
import threading
import time
import weakref

from tensorweave.extension import records

from tensorweave_board import protos

FILE_VERSION = "brain.Event:2"
_counter = itertools.count()
_open_writers = weakref.WeakSet()


def event_file_name(filename_suffix=""):
    """A name no other writer uses: time, host, process and a per-process counter."""
    return (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
            f"{next(_counter)}{filename_suffix or ''}")


class EventFileWriter:
    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=""):
        self._logdir = str(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._closed = True
        self._open()

    def _open(self):
        os.makedirs(self._logdir, exist_ok=True)
        self.path = os.path.join(self._logdir, event_file_name(self._suffix))
        self._records = records.RecordWriter(open(self.path, "xb"))
        self._queue = queue.Queue(self._max_queue)
        self._error = None
        first = protos.Event(wall_time=time.time(), file_version=FILE_VERSION)
        self._records.write(first.SerializeToString())
        self._records.flush()
        self._thread = threading.Thread(target=self._run, name=f"EventFileWriter({self.path})", daemon=True)
        self._closed = False
        self._thread.start()
        _open_writers.add(self)

    def get_logdir(self):
        return self._logdir

    def reopen(self):
        """Starts a new event file after ``close()``; does nothing while open."""
        with self._lock:
            if self._closed:
                self._open()

    def add_event(self, event):
        data = event if isinstance(event, bytes) else event.SerializeToString()
        self._check()
        self._queue.put(("event", data))

    def flush(self):
        """Returns once every event added so far is written and flushed to the OS."""
        if self._closed:
            return
        self._check()
        done = threading.Event()
        self._queue.put(("flush", done))
        while not done.wait(0.5):
            if not self._thread.is_alive():
                break
        self._check()

    def close(self):
        """Writes what is queued, syncs the file to disk and closes it; a second call does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(("close", None))
            self._thread.join()
            _open_writers.discard(self)
        if self._error is not None:
            raise self._error

    def _check(self):
        if self._error is not None:
            raise OSError(f"writing events to {self.path} failed: {self._error}") from self._error
        if self._closed:
            raise ValueError(f"the event writer for {self._logdir} is closed; call reopen() to write again")

    def _run(self):
        deadline = time.monotonic() + self._flush_secs
        while True:
            try:
                kind, item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                kind, item = "tick", None
            try:
                if kind == "event":
                    self._records.write(item)
                    continue
                self._records.flush()
                deadline = time.monotonic() + self._flush_secs
                if kind == "flush":
                    item.set()
                elif kind == "close":
                    self._records.sync()
                    self._records.close()
                    return
            except Exception as e:  # noqa: BLE001 - kept and raised by the caller's next call
                self._error = e
                if kind == "flush":
                    item.set()
                if kind == "close":
                    return


@atexit.register
def _close_open_writers():
    for writer in list(_open_writers):
        try:
            writer.close()
        except Exception:  # noqa: BLE001, S110 - exiting: nothing left to report to
            pass
