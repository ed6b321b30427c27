"""tf.logging in one process: records name the caller's line, counters are per call line, and the user's
own logging (root handlers and levels, other loggers) is left as it was."""

import logging
import sys

import pytest

import tensorweave as tf


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(level=1)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def records():
    """The tensorflow logger's records at every level (its level restored afterwards)."""
    logger = tf.get_logger()
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    tf.logging.set_verbosity(1)
    yield handler.records
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_records_name_the_callers_file_line_and_function(records):
    tf.logging.info("at %s", "here"); line = sys._getframe().f_lineno  # noqa: E702 - the same line
    tf.get_logger().warning("direct")
    first, second = records
    assert (first.getMessage(), first.levelname, first.name) == ("at here", "INFO", "tensorflow")
    assert (first.filename, first.lineno, first.funcName) == ("test_tf_logging.py", line,
                                                              "test_records_name_the_callers_file_line_and_function")
    assert second.filename == "test_tf_logging.py" and second.lineno == line + 1


def test_log_every_n_and_first_n_count_per_call_line(records):
    def every_third(i):
        tf.logging.log_every_n(tf.logging.INFO, "a %d", 3, i)

    for i in range(7):
        every_third(i)
        tf.logging.log_first_n(tf.logging.INFO, "b %d", 2, i)
    assert [r.getMessage() for r in records] == ["a 0", "b 0", "b 1", "a 3", "a 6"]


def test_levels_vlog_fatal_and_task_status(records):
    tf.logging.vlog(1, "v")
    tf.logging.fatal("f")
    tf.logging.TaskLevelStatusMessage("s")
    tf.logging.log_if(tf.logging.WARN, "no", False)
    assert [(r.levelno, r.getMessage()) for r in records] == [(1, "v"), (50, "f"), (40, "s")]
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR, tf.logging.FATAL) == (
        10, 20, 30, 40, 50)
    tf.logging.flush()


def test_set_verbosity_touches_only_the_tensorflow_logger():
    root, mine = logging.getLogger(), logging.getLogger("users.own")
    before = (list(root.handlers), root.level, mine.level, mine.getEffectiveLevel())
    level = tf.get_logger().level
    try:
        tf.logging.set_verbosity(tf.logging.DEBUG)
        assert tf.logging.get_verbosity() == tf.logging.DEBUG
        tf.logging.info("x")
        assert (list(root.handlers), root.level, mine.level, mine.getEffectiveLevel()) == before
    finally:
        tf.get_logger().setLevel(level)
    assert tf.get_logger() is logging.getLogger("tensorflow") and tf.get_logger().propagate
