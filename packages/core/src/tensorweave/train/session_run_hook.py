"""The hook protocol of MonitoredSession: code that runs around every ``run`` call of a training loop.

A hook may add fetches, feeds and run options to each call (``before_run`` returns SessionRunArgs),
read their results (``after_run`` gets SessionRunValues) and ask the loop to stop
(``run_context.request_stop()``). ``begin`` runs before the graph is finalized, so it may add ops.
"""

import collections

__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]


class SessionRunHook:
    """Base class of hooks; override what you need (every method is optional)."""

    def begin(self):
        """Called once before the session is created; the graph may still change here."""

    def after_create_session(self, session, coord):
        """Called when a (new or recovered) session exists and its variables are initialized or restored."""

    def before_run(self, run_context):
        """Called before each run; may return SessionRunArgs to add fetches, feeds and options to it."""
        return None

    def after_run(self, run_context, run_values):
        """Called after each run with the results of what before_run asked for."""

    def end(self, session):
        """Called once at the end of the loop (not after an exception)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a run: fetches (any fetch structure), a feed_dict and RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The run being made: the caller's original arguments, the session, and the stop request."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        """Makes ``should_stop()`` true after this run."""
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """The results of a hook's fetches, plus the run's options and metadata."""
