"""``tf.logging``: TF 1.x's logging on Python's ``logging``, through the logger named ``tensorflow``.

As in TF the logger is set up when this module is imported and touches nothing of the user's: it gets a
handler of its own (``INFO:tensorflow:message`` on stderr, Python's ``BASIC_FORMAT``) only if the root logger
has none then, so a program that configured logging before the import sees TensorFlow's records once,
through its own handlers; one that configures the root afterwards (or runs under ``tf.app.run``, which puts
absl's handler there) sees them twice, as it did under TF (``tf.get_logger().propagate = False`` keeps one).
The level starts unset (the root's, WARNING by default, hides ``info``) except in an interactive session,
where it is INFO and goes to stdout. Records name the user's file and line, not this module's.
"""

import logging as _logging
import os as _os
import sys as _sys
import threading as _threading
import traceback as _traceback
from logging import DEBUG, ERROR, FATAL, INFO, WARN

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN", "TaskLevelStatusMessage", "debug", "error", "fatal", "flush",
           "get_logger", "get_verbosity", "info", "log", "log_every_n", "log_first_n", "log_if", "set_verbosity",
           "vlog", "warn", "warning"]

_logger = None
_logger_lock = _threading.Lock()
_counts_per_call_site = {}
_SKIPPED_FILES = {_os.path.normcase(__file__), _os.path.normcase(_logging.__file__)}


def _caller_frame():
    """The innermost frame outside this module and Python's logging: the line the user logged from."""
    frame = _sys._getframe(1)
    while frame is not None and _os.path.normcase(frame.f_code.co_filename) in _SKIPPED_FILES:
        frame = frame.f_back
    return frame


def _find_caller(stack_info=False, stacklevel=1):
    """Logger.findCaller for the tensorflow logger: records carry the user's file, line and function."""
    frame = _caller_frame()
    sinfo = "Stack (most recent call last):\n" + "".join(_traceback.format_stack(frame)) if stack_info else None
    if frame is None:
        return "(unknown file)", 0, "(unknown function)", sinfo
    return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, sinfo


def _interactive():
    return hasattr(_sys, "ps1") or bool(_sys.flags.interactive)


def get_logger():
    """The ``tensorflow`` logger, set up on first call as TF 1.x does (see the module's docstring)."""
    global _logger
    with _logger_lock:
        if _logger is None:
            logger = _logging.getLogger("tensorflow")
            logger.findCaller = _find_caller
            if not _logging.getLogger().handlers:
                stream = _sys.stderr
                if _interactive():
                    logger.setLevel(INFO)
                    stream = _sys.stdout
                handler = _logging.StreamHandler(stream)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            _logger = logger
    return _logger


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs at FATAL (CRITICAL) and returns: as in TF 1.x it does not end the program."""
    get_logger().fatal(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    """Logs at the numeric ``level`` itself (1 is below DEBUG), as TF 1.x does."""
    get_logger().log(level, msg, *args, **kwargs)


def TaskLevelStatusMessage(msg):  # noqa: N802 - TF's name
    error(msg)


def log_if(level, msg, condition, *args):
    if condition:
        vlog(level, msg, *args)


def _next_count_at_call_site():
    """How many times the calling line has logged through log_every_n/log_first_n before (0 the first time)."""
    frame = _caller_frame()
    site = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("<unknown>", 0)
    count = _counts_per_call_site.get(site, -1) + 1
    _counts_per_call_site[site] = count
    return count


def log_every_n(level, msg, n, *args):
    """Logs the 1st, (n+1)th, (2n+1)th... call made from the same line."""
    log_if(level, msg, _next_count_at_call_site() % n == 0, *args)


def log_first_n(level, msg, n, *args):
    """Logs the first ``n`` calls made from the same line."""
    log_if(level, msg, _next_count_at_call_site() < n, *args)


def get_verbosity():
    """The logger's effective level (the root's while ``set_verbosity`` was not called)."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v):
    get_logger().setLevel(v)


def flush():
    """Flushes the tensorflow logger's own handlers (TF 1.x raised NotImplementedError here)."""
    for handler in get_logger().handlers:
        handler.flush()


# TF sets its logger up while it is imported, before a program configures logging or absl's app.run puts
# its handler on the root: a program that logs after either sees what it saw under TF.
get_logger()
