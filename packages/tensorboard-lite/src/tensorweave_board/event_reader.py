"""Reads Event protos from event files written by tensorweave, TensorFlow, tensorboardX or PyTorch,
verifying every record's checksums and tailing files that are still being written."""

import logging
import warnings

from google.protobuf.message import DecodeError

from tensorweave_board import protos, scalar_events
from tensorweave_board.record_io import DataLossWarning, RecordReader, warn_if_incomplete

_log = logging.getLogger("tensorweave_board")

__all__ = ["EventBatch", "EventFileLoader", "is_event_file", "read_events"]


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
        """New events as (record offset, Event), every record parsed by protobuf."""
        out = []
        offsets, records = self._records.read_columns(max_events)
        for offset, data in zip(offsets, records):
            try:
                out.append((offset, protos.Event.FromString(data)))
            except DecodeError as e:
                self._skip(offset, e)
        return out

    def load_batch(self):
        """The events of the next block of the file (up to ``RecordReader.CHUNK`` bytes) as an EventBatch:
        plain scalar events decoded vectorized, the others to be parsed by protobuf as they are used."""
        block = self._records.read_block()
        scalars, slow = scalar_events.decode(block)
        return EventBatch(self, block, scalars, slow)

    def _skip(self, offset, error):
        self.skipped += 1
        message = f"{self.path}: the record at byte {offset} is not an Event ({error}); skipped it"
        _log.warning(message)
        warnings.warn(message, DataLossWarning, stacklevel=5)


class EventBatch:
    """One block of a file's events: ``count`` records, of which the plain scalar events are decoded in
    ``scalars`` (``scalar_events.ScalarColumns``); ``events()`` parses the others. ``slow_ordinals`` are
    those records' places in the block, ``scalars.ordinals`` the decoded ones'."""

    def __init__(self, loader, block, scalars, slow):
        self.count, self.scalars, self.slow_ordinals = block.count, scalars, slow[0]
        self._loader, self._block, self._slow = loader, block, slow

    def events(self):
        """(index in ``slow_ordinals``, record offset, Event) for each of the other records, parsed as it is
        asked for (so each is used while still in the cache); records that are not Events are skipped."""
        parse, buf, base = protos.Event.FromString, self._block.buf, self._block.base
        for i, (pos, length) in enumerate(zip(self._slow[1].tolist(), self._slow[2].tolist())):
            try:
                event = parse(buf[pos + 12:pos + 12 + length])
            except DecodeError as e:
                self._loader._skip(base + pos, e)
                continue
            yield i, base + pos, event


def read_events(path):
    """Every intact Event of a finished file, in order; warns (DataLossWarning) about an incomplete tail or
    a corrupted record, and returns the events before it."""
    loader = EventFileLoader(path)
    events = [event for _, event in loader.load()]
    warn_if_incomplete(path, loader, len(events), "events")
    return events
