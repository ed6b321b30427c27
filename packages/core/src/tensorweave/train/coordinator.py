"""tf.train.Coordinator: threads agree when to stop, and the first error of any thread reaches the joiner."""

import contextlib
import logging
import sys
import threading
import time

from tensorweave import errors

__all__ = ["Coordinator", "LooperThread"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


class Coordinator:
    """A stop flag shared by threads, plus the first exception that asked for the stop.

    Threads poll ``should_stop()`` (or block in ``wait_for_stop()``); any thread calls
    ``request_stop(ex)``; the main thread ``join``s them and gets ``ex`` re-raised. Exceptions of
    ``clean_stop_exception_types`` (OutOfRangeError by default: an input ran out) stop cleanly.
    """

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def _filter_exception(self, ex):
        value = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(value, self._clean_stop_exception_types) else ex

    def request_stop(self, ex=None):
        """Asks every thread to stop; ``ex`` (an exception or exc_info tuple) is re-raised by ``join``."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if ex is not None:
                    _reraise(ex if isinstance(ex, tuple) else (type(ex), ex, ex.__traceback__))
                return
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    self._exc_info_to_raise = ex if isinstance(ex, tuple) else (type(ex), ex, ex.__traceback__)
                self._stop_event.set()

    def clear_stop(self):
        """Makes the coordinator reusable: clears the stop request and any recorded exception."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """``with coord.stop_on_exception():`` reports an exception raised in the block as a stop request."""
        try:
            yield
        except Exception:  # noqa: BLE001 - reported to the coordinator, raised again by join
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Blocks until a stop is requested (True) or ``timeout`` seconds pass (False)."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for ``threads`` (and registered ones) to end; re-raises the exception passed to request_stop.

        Once a stop is requested the threads get ``stop_grace_period_secs`` to finish; threads still
        running then raise RuntimeError naming them (or are logged, with ``ignore_live_threads``).
        """
        with self._lock:
            threads = set(self._registered_threads) | set(threads or ())
        while any(t.is_alive() for t in threads) and not self._stop_event.wait(0.01):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers = sorted(t.name for t in threads if t.is_alive())
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is not None:
                _reraise(self._exc_info_to_raise)
        if stragglers:
            message = f"Coordinator stopped with threads still running: {' '.join(stragglers)}"
            if not ignore_live_threads:
                raise RuntimeError(message)
            _log.info(message)

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception passed to request_stop, if any (for a thread that checks early)."""
        with self._lock:
            if self._exc_info_to_raise is not None:
                _reraise(self._exc_info_to_raise)

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling ``target`` every ``timer_interval_secs`` until the stop."""
        looper = LooperThread(self, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper


def _reraise(exc_info):
    raise exc_info[1].with_traceback(exc_info[2])


class LooperThread(threading.Thread):
    """Runs ``target`` (or ``run_loop``) every ``timer_interval_secs`` until the coordinator stops."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord!r}")
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        return coord.loop(timer_interval_secs, target, args, kwargs)

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once before the loop starts."""

    def stop_loop(self):
        """Called once after the loop ends."""

    def run_loop(self):
        if self._target:
            self._target(*self._args, **self._kwargs)
