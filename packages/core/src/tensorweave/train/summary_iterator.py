"""``tf.train.summary_iterator``: the Event protos of an event file, for programs that read back what a
FileWriter wrote (the dashboard package reads event files its own way, tailing files still being written)."""

from tensorweave.protos.summary import Event
from tensorweave.python_io import tf_record_iterator

__all__ = ["summary_iterator"]


def summary_iterator(path):
    """Yields the ``tf.Event`` protos of the event file ``path``, the file's version record first. As in TF 1.15
    the file is opened at the first ``next()``: a missing one raises NotFoundError there, a damaged record
    DataLossError when the iteration reaches it."""
    for record in tf_record_iterator(path):
        yield Event.FromString(record)
