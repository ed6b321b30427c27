"""tensorweave-tensorboard-lite: TF1's summary ops (``tf.summary.*``), TensorBoard-compatible event files
written in the background, a summary-saving hook, and a live dashboard (``tensorweave-board``)."""

__version__ = "0.1.0"

from tensorweave_board.event_reader import EventFileLoader, read_events  # noqa: E402,F401
from tensorweave_board.writer import FileWriter, FileWriterCache  # noqa: E402,F401


def __getattr__(name):
    # The hook needs tensorweave itself; loaded on first use, so the dashboard starts without importing it.
    if name == "SummarySaverHook":
        from tensorweave_board.hooks import SummarySaverHook
        return SummarySaverHook
    raise AttributeError(f"module 'tensorweave_board' has no attribute {name!r}")
