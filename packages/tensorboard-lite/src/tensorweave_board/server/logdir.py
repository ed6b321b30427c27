"""The runs of a log directory: every folder under it holding event files is a run (named by its path
relative to the log directory, '.' for the directory itself). Files are tailed: each reload reads only
what was appended since the last, so new data appears while a run writes. ``generation`` counts changes,
and ``wait_for_change`` lets a page's request wait for the next one (long polling) instead of asking
again every few seconds."""

import logging
import os
import threading
import time

from tensorweave_board.event_reader import EventFileLoader, is_event_file
from tensorweave_board.server.run_data import RunData

_log = logging.getLogger("tensorweave_board")


class Logdir:
    SHOW_EVERY = 1.0  # seconds: a reload that reads for longer shows waiting pages what it has this often

    def __init__(self, path, reload_interval=1.0):
        self.root = os.path.realpath(path)
        self.reload_interval = reload_interval
        self.runs = {}
        self._loaders = {}
        self._reload_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self.loads = 0
        self.generation = 0
        self._changed = threading.Condition()
        self._seen = None
        self._bumped = time.monotonic()
        self._failures = {}  # path: the last error reading it raised, logged once

    def _bump(self):
        self._bumped = time.monotonic()
        with self._changed:
            self.generation += 1
            self._changed.notify_all()

    def wait_for_change(self, generation, timeout):
        """Blocks until the data changes from ``generation`` or ``timeout`` seconds pass; the generation now."""
        with self._changed:
            self._changed.wait_for(lambda: self.generation != generation, timeout)
            return self.generation

    def inside(self, path):
        """Whether ``path`` really lies inside the log directory (symbolic links resolved)."""
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.root + os.sep)

    def _discover(self):
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if not is_event_file(name) or path in self._loaders or not self.inside(path):
                    continue
                if not os.path.isfile(path):
                    continue
                run = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
                if run not in self.runs:
                    self.runs[run] = RunData(run)
                self._loaders[path] = (self.runs[run], EventFileLoader(path))

    def reload(self):
        """Reads what every event file gained since the last reload; a bad file is reported, never raised."""
        with self._reload_lock:
            self._bumped = time.monotonic()  # a quick reload answers waiting pages once, at its end
            try:
                self._discover()
            except OSError as e:
                _log.warning("could not list %s: %s", self.root, e)
            for path, (run, loader) in list(self._loaders.items()):
                while True:
                    try:
                        batch = loader.load_batch()  # read and decoded outside the lock: charts stay served
                        run.add_batch(path, batch)  # (which takes the lock, a slice at a time)
                    except Exception as e:  # noqa: BLE001 - one bad file must not stop the others
                        failure = f"skipping {path}: {type(e).__name__}: {e}"
                        if self._failures.get(path) != failure:  # once, not at every reload
                            _log.warning(failure)
                        self._failures[path] = failure
                        break
                    self._failures.pop(path, None)
                    if not batch.count:
                        break
                    if time.monotonic() - self._bumped > self.SHOW_EVERY:
                        self._bump()  # a file that takes long to read is shown as it is read
            seen = ([run.version for run in self.runs.values()],
                    [(loader.state, loader.error) for _, loader in self._loaders.values()])
            if seen != self._seen:
                self._seen = seen
                self._bump()
            self.loads += 1

    def files(self):
        """Each event file with its read state (ok, incomplete, corrupt) and the error, if any."""
        return [{"run": run.name, "file": os.path.relpath(path, self.root), "state": loader.state,
                 "error": loader.error, "bytes_read": loader.offset}
                for path, (run, loader) in sorted(list(self._loaders.items()))]  # (a copy: reload may add)

    def start(self):
        """Reloads in the background every ``reload_interval`` seconds."""
        self._thread = threading.Thread(target=self._loop, name="tensorweave-board-reload", daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.is_set():
            started = time.monotonic()
            self.reload()
            self._stop.wait(max(0.0, self.reload_interval - (time.monotonic() - started)))

    def stop(self):
        self._stop.set()
        self._bump()  # waiting requests answer now
        if self._thread is not None:
            self._thread.join(timeout=10)
