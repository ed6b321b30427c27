"""Reads Event protos from event files written by tensorweave, TensorFlow, tensorboardX or PyTorch,
verifying every record's checksums and tailing files that are still being written."""

import logging
import warnings

from google.protobuf.message import DecodeError

from tensorweave_board import protos
from tensorweave_board.record_io import DataLossWarning, RecordReader

_log = logging.getLogger("tensorweave_board")

__all__ = ["EventFileLoader", "is_event_file", "read_events"]


def is_event_file(name):
    """Whether a file name is an event file's (TensorBoard's rule: it contains 'tfevents')."""
    return "tfevents" in name


class EventFileLoader:
    """The events of one file, read from where the previous ``load()`` stopped.

    ``state`` tells an incomplete tail ('incomplete': read again later) from corruption ('corrupt':
    the rest of the file is skipped, ``error`` says where and why); a record whose checksums match but
    which is not an Event is skipped with a warning.
    """

    def __init__(self, path):
        self.path = path
        self._records = RecordReader(path)
        self.skipped = 0

    @property
    def state(self):
        return self._records.state

    @property
    def error(self):
        return self._records.error

    @property
    def offset(self):
        return self._records.offset

    def load(self, max_events=None):
        """New events as (record offset, Event)."""
        out = []
        self.parse_into(lambda offset, event: out.append((offset, event)), max_events)
        return out

    def parse_into(self, consume, max_events=None):
        """Calls ``consume(offset, event)`` for each new event without keeping them; returns how many records
        were read (a big file is read in batches of ``max_events`` this way with little memory)."""
        parse = protos.Event.FromString
        offsets, records = self._records.read_columns(max_events)
        for offset, data in zip(offsets, records):
            try:
                event = parse(data)
            except DecodeError as e:
                self.skipped += 1
                message = f"{self.path}: the record at byte {offset} is not an Event ({e}); skipped it"
                _log.warning(message)
                warnings.warn(message, DataLossWarning, stacklevel=3)
                continue
            consume(offset, event)
        return len(offsets)


def read_events(path):
    """Every intact Event of a finished file, in order; warns (DataLossWarning) about an incomplete tail or
    a corrupted record, and returns the events before it."""
    loader = EventFileLoader(path)
    events = [event for _, event in loader.load()]
    if loader.state == "incomplete":
        message = (f"{path} ends inside a record at byte {loader.offset} (its writer crashed or is still "
                   f"writing); read the {len(events)} complete events before it")
        _log.warning(message)
        warnings.warn(message, DataLossWarning, stacklevel=2)
    return events
