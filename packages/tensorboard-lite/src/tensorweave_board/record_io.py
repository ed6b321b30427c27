"""Reading event files as the dashboard does: the TFRecord format and its writer are the core's
(``tensorweave.records``); here a reader tails a file that may still be being written, and tells an
incomplete tail (a file still being written, or cut short: wait and read again) from corruption (a
checksum that does not match: stop there with a warning). Big files are read in blocks, framed and
verified mostly vectorized (``framing``).
"""

import logging
import os
import warnings

from tensorweave.extension import record_format as _format, records as _records

from tensorweave_board.framing import Block, frame_block

DATA_CHECK, FOOTER, HEADER, MAX_LENGTH = _format.DATA_CHECK, _format.FOOTER, _format.HEADER, _format.MAX_LENGTH
header_problem, too_long = _format.header_problem, _format.too_long
frame, masked_crc, RecordWriter = _format.frame, _format.masked_crc, _records.RecordWriter  # for the board's users

_log = logging.getLogger("tensorweave_board")


class DataLossWarning(UserWarning):
    """A record whose checksum does not match: the file is read up to the record before it."""


class RecordReader:
    """Reads the records of one file from where it last stopped, so a growing file can be tailed.

    ``read_block()`` returns the next block (up to ``CHUNK`` bytes) of complete, verified records as a
    ``framing.Block``; ``read()`` every new record as (offset, bytes). ``state`` is then 'ok' (every byte
    read), 'incomplete' (the file ends inside a record: it may still be being written), 'corrupt' (a
    checksum failed, or a length no event can have, at ``error_offset``, described by ``error``; nothing
    past it is read, and the warning is logged once), 'missing' or 'unreadable' (the file is gone, or
    cannot be opened: read again from the same place once it can, the warning logged once).
    """

    CHUNK = 4 << 20  # bytes per block: big enough to vectorize, small enough to stay in cache

    def __init__(self, path, offset=0, verify=True):
        self.path = path
        self.offset = offset
        self.verify = verify
        self.state = "ok"
        self.error = None
        self.error_offset = None

    def read(self, max_records=None):
        offsets, records = self.read_columns(max_records)
        return list(zip(offsets, records))

    def read_columns(self, max_records=None):
        """Like ``read`` but as two lists, (offsets, records): no tuple per record, for big files."""
        offsets, records = [], []
        while max_records is None or len(records) < max_records:
            block = self.read_block(None if max_records is None else max_records - len(records))
            if not block.count:
                break
            pos, _ = block.positions()
            offsets.extend((pos + block.base).tolist())
            records.extend(block.records())
        return offsets, records

    def read_block(self, max_records=None):
        """The complete, verified records of the next block (at most ``max_records``); advances ``offset``."""
        if self.state == "corrupt":
            return Block(b"", self.offset)
        limit = float("inf") if max_records is None else max_records
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if self.offset >= size:
                    return Block(b"", self.offset)
                f.seek(self.offset)
                buf = f.read(self.CHUNK)
                block, self.state, need, failure = frame_block(buf, self.offset, limit, self.verify)
                if block.count == 0 and len(buf) < need <= size - self.offset:
                    f.seek(self.offset)  # one record larger than a chunk, all in the file now: read it whole
                    block, self.state, need, failure = frame_block(f.read(need), self.offset, limit, self.verify)
        except FileNotFoundError:
            self.state, self.error = "missing", f"{self.path} no longer exists"
            return Block(b"", self.offset)
        except OSError as e:  # (e.g. replaced by a folder, permissions): tried again at the next read
            error = f"{self.path} cannot be read ({e.strerror or e}); trying again at each reload"
            if error != self.error:
                _log.warning(error)
            self.state, self.error = "unreadable", error
            return Block(b"", self.offset)
        if failure is None:
            self.error = None
        else:
            self._corrupt(self.offset + failure[0], failure[1])
        self.offset += block.consumed
        return block

    def _corrupt(self, offset, why):
        self.state, self.error_offset = "corrupt", offset
        self.error = (f"{self.path}: corrupted record at byte {offset} ({why}); read the records before it "
                      f"and skipped the rest of the file")
        _log.warning(self.error)
        warnings.warn(self.error, DataLossWarning, stacklevel=4)


def read_record_at(path, offset, verify=True):
    """The data of the single record at ``offset`` (used to fetch a large payload, e.g. an image, on demand)."""
    with open(path, "rb") as f:
        f.seek(offset)
        head = f.read(12)
        if len(head) < HEADER.size:
            raise ValueError(f"{path}: no record at byte {offset}")
        length, problem = header_problem(head)
        if verify and problem:
            raise ValueError(f"{path}: corrupted record at byte {offset} ({problem})")
        if length > MAX_LENGTH:
            raise ValueError(f"{path}: corrupted record at byte {offset} ({too_long(length)})")
        size = os.fstat(f.fileno()).st_size
        if offset + 16 + length > size:
            raise ValueError(f"{path}: the record at byte {offset} is incomplete: it says it holds {length:,} "
                             f"bytes, and the file ends at byte {size:,}")
        data = f.read(length)
        tail = f.read(4)
        if len(data) < length or len(tail) < 4:
            raise ValueError(f"{path}: the record at byte {offset} is incomplete")
        if verify and masked_crc(data) != FOOTER.unpack(tail)[0]:
            raise ValueError(f"{path}: corrupted record at byte {offset} ({DATA_CHECK})")
        return data


def warn_if_incomplete(path, reader, count, what):
    """Warns (DataLossWarning) when a finished file's ``reader`` stopped inside a record."""
    if reader.state == "incomplete":
        message = (f"{path} ends inside a record at byte {reader.offset} (its writer crashed or is still "
                   f"writing); read the {count} complete {what} before it")
        _log.warning(message)
        warnings.warn(message, DataLossWarning, stacklevel=3)

