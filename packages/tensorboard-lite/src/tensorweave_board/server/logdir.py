"""The runs of a log directory: every folder under it holding event files is a run (named by its path
relative to the log directory, '.' for the directory itself). Files are tailed: each reload reads only
what was appended since the last, so new data appears while a run writes."""

import logging
import os
import threading
import time

from tensorweave_board.event_reader import EventFileLoader, is_event_file
from tensorweave_board.server.run_data import RunData

_log = logging.getLogger("tensorweave_board")


class Logdir:
    BATCH = 50_000

    def __init__(self, path, reload_interval=2.0):
        self.root = os.path.realpath(path)
        self.reload_interval = reload_interval
        self.runs = {}
        self._loaders = {}
        self._reload_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self.loads = 0

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
            try:
                self._discover()
            except OSError as e:
                _log.warning("could not list %s: %s", self.root, e)
            for path, (run, loader) in list(self._loaders.items()):
                consume = run.consumer(path)
                while True:
                    try:
                        with run.lock:
                            count = loader.parse_into(consume, self.BATCH)
                            run.version += 1
                    except Exception as e:  # noqa: BLE001 - one bad file must not stop the others
                        _log.warning("skipping %s: %s: %s", path, type(e).__name__, e)
                        break
                    if count < self.BATCH:
                        break
            self.loads += 1

    def files(self):
        """Each event file with its read state (ok, incomplete, corrupt) and the error, if any."""
        return [{"run": run.name, "file": os.path.relpath(path, self.root), "state": loader.state,
                 "error": loader.error, "bytes_read": loader.offset}
                for path, (run, loader) in sorted(self._loaders.items())]

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
        if self._thread is not None:
            self._thread.join(timeout=10)
