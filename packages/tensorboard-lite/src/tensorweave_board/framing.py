"""Framing and verifying a block of TFRecords (see ``record_io``) without a Python step per record where
the file allows it, with the same result as reading one record at a time.

Records are stepped through one by one (each checksum checked as it is read) until their lengths repeat:
event files of scalars are long runs of same-sized records, or of a few sizes in turn. The run is then
framed by reading only the length fields where the pattern predicts them, vectorized; a record whose
length differs ends it, and stepping resumes there. The records of a run are a ``Stretch``: equal
lengths at a fixed stride, so their checksums (``crc_batch``) and, later, their contents
(``scalar_events``) are read as strided numpy views of the buffer. Records left in short runs are
gathered by length into copies, which are stretches too. Whatever the order of the work, the first
record that fails a check, in file order, ends the block, exactly where one by one reading stops.
"""

import struct

import crc32c
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tensorweave.extension import record_format as _format

from tensorweave_board import crc_batch

DATA_CHECK, LENGTH_CHECK, MASK_DELTA, MAX_LENGTH = (_format.DATA_CHECK, _format.LENGTH_CHECK, _format.MASK_DELTA,
                                                    _format.MAX_LENGTH)
too_long, _FOOTER, _HEADER, _masked = _format.too_long, _format.FOOTER, _format.HEADER, _format.mask

BATCH = 32  # records of one length checked vectorized from this many on (fewer: one crc32c call each)


class Stretch:
    """``count`` records of ``length`` bytes of data, record i at ``pos + i * stride`` in ``buf`` (the
    block's buffer, or a gathered copy of scattered records). ``ordinals()`` are their places in the
    block (ascending), ``origins()`` their positions in the block's buffer; ``checked`` tells whether
    their checksums were verified, and ``varying`` (if known) marks the data bytes that differ between them."""

    __slots__ = ("buf", "pos", "stride", "count", "length", "varying", "checked", "_first", "_step", "_ordinals",
                 "_origins")

    def __init__(self, buf, pos, stride, count, length, first=0, step=1, ordinals=None, origins=None):
        self.buf, self.pos, self.stride, self.count, self.length = buf, pos, stride, count, length
        self._first, self._step, self._ordinals, self._origins = first, step, ordinals, origins
        self.varying, self.checked = None, False

    def ordinals(self):
        if self._ordinals is not None:
            return self._ordinals[:self.count]
        return self._first + self._step * np.arange(self.count, dtype=np.int64)

    def origins(self):
        if self._origins is not None:
            return self._origins[:self.count]
        return self.pos + self.stride * np.arange(self.count, dtype=np.int64)

    def column(self, dtype, at):
        """The field of type ``dtype`` at byte ``at`` of each record, as a strided view."""
        return crc_batch.column(self.buf, self.pos, self.stride, self.count, dtype, at)


class Block:
    """The complete records of one read, every checksum verified: its ``stretches``, and the ``loose``
    records as (ordinals, positions, lengths) arrays. Ordinals count the records of the block in file
    order; positions are in ``buf``, which starts at file offset ``base``."""

    def __init__(self, buf, base):
        self.buf, self.base = buf, base
        self.stretches = []
        self.loose = (np.zeros(0, np.int64),) * 3
        self.count = 0
        self.consumed = 0

    def positions(self):
        """(positions, lengths) of every record, by ordinal, as int64 arrays."""
        pos, lengths = np.empty(self.count, dtype=np.int64), np.empty(self.count, dtype=np.int64)
        for s in self.stretches:
            ordinals = s.ordinals()
            pos[ordinals], lengths[ordinals] = s.origins(), s.length
        ordinals, at, sizes = self.loose
        pos[ordinals], lengths[ordinals] = at, sizes
        return pos, lengths

    def records(self):
        """The data of every record, by ordinal."""
        pos, lengths = self.positions()
        buf = self.buf
        return [buf[p + 12:p + 12 + n] for p, n in zip(pos.tolist(), lengths.tolist())]

    def cut(self, ordinal, pos):
        """Keeps the records before ``ordinal``, which starts at ``pos``."""
        for s in self.stretches:
            s.count = int(np.searchsorted(s.ordinals(), ordinal))
        self.stretches = [s for s in self.stretches if s.count]
        keep = self.loose[0] < ordinal
        self.loose = tuple(a[keep] for a in self.loose)
        self.count, self.consumed = min(self.count, ordinal), pos


def _period(lengths):
    """The shortest repeating pattern of ``lengths`` (at most half as long), rotated to continue it."""
    n = len(lengths)
    for p in range(1, n // 2 + 1):
        if lengths[p:] == lengths[:-p]:
            return lengths[n - p:]
    return None


def probe(buf, pos, end, pattern, first, room, stretches):
    """How many of the records at ``pos`` continue the repeating ``pattern`` of lengths (at most ``room``),
    found by reading only their length fields, in chunks growing eightfold; appends them to
    ``stretches``, one per place in the pattern. Returns (records, bytes)."""
    period, starts = len(pattern), [0]
    for length in pattern:
        starts.append(starts[-1] + length + 16)
    cycle = starts[-1]
    fit, matched, chunk = (end - pos) // cycle, 0, 64
    while matched < min(fit * period, room):
        done = matched // period
        k = min(chunk, fit - done)
        good = k * period
        for j, length in enumerate(pattern):
            wrong = np.flatnonzero(crc_batch.column(buf, pos + done * cycle, cycle, k, "<u8", starts[j]) != length)
            if wrong.size:
                good = min(good, int(wrong[0]) * period + j)
        matched += good
        if good < k * period:
            break
        chunk *= 8
    matched = int(min(matched, room))
    for j, length in enumerate(pattern[:matched]):
        stretches.append(Stretch(buf, pos + starts[j], cycle, (matched - j + period - 1) // period, length,
                                 first + j, period))
    return matched, (matched // period) * cycle + starts[matched % period]


class _Lookout:
    """When to stop stepping and probe, with which pattern: the last 32 lengths are checked every few
    records (less often while probes find little), and right after a long run the same pattern is tried
    again, since a run is usually broken by one odd record (a histogram among scalars)."""

    WINDOW = 32  # patterns of up to 16 records (e.g. ten losses and an accuracy)
    LONG = 64  # a probe that found this many records was worth it

    def __init__(self):
        self.mark, self.every, self.resume = 0, 8, None

    def look(self, buf, pos, end, ordinal, limit, lengths, stretches):
        """Probes at ``pos`` if it is time: (records found, their bytes, ordinal of the next look)."""
        if self.resume is None:
            stepped = len(lengths) - self.mark
            if stepped < self.WINDOW:
                return 0, 0, ordinal + self.WINDOW - stepped
            pattern = _period(lengths[-self.WINDOW:])
            if pattern is None:
                self.every = min(2 * self.every, max(self.every, 64))
                return 0, 0, ordinal + self.every
        else:
            pattern = self.resume
        got, used = probe(buf, pos, end, pattern, ordinal, limit - ordinal, stretches)
        if got >= self.LONG:
            shift = got % len(pattern)
            self.resume, self.every = pattern[shift:] + pattern[:shift], 8
        elif self.resume is None:
            self.every = min(2 * self.every, 4096)
        else:
            self.resume = None
        if got:
            self.mark = len(lengths)  # the lengths stepped before a run do not continue into what follows it
        return got, used, ordinal + got + (1 if self.resume else self.every)


def frame_block(buf, base, limit=float("inf"), verify=True):
    """The complete records at the start of ``buf`` (at most ``limit``), as a Block, with the state after
    them: ('ok' | 'incomplete' | 'corrupt', bytes the incomplete record needs, (position, why) of a
    failed check). A record running past ``buf`` that claims more than ``MAX_LENGTH`` bytes is corrupt:
    waiting for it, or reading it whole, could never end well."""
    block = Block(buf, base)
    pos, end, ordinal, failure, state, need = 0, len(buf), 0, None, "ok", 0
    unpack_header, unpack_footer, crc = _HEADER.unpack_from, _FOOTER.unpack_from, crc32c.crc32c
    ordinals, positions, lengths, stretches = [], [], [], []
    lookout, look_at = _Lookout(), 1
    while pos < end and ordinal < limit:
        if end - pos < 12:
            state = "incomplete"
            break
        length, length_crc = unpack_header(buf, pos)
        if verify:
            c = crc(buf[pos:pos + 8])
            if ((((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF) != length_crc:
                failure = (ordinal, pos, LENGTH_CHECK)
                break
        stop = pos + 12 + length
        if stop + 4 > end:
            if length > MAX_LENGTH:
                failure = (ordinal, pos, too_long(length))
                break
            state, need = "incomplete", stop + 4 - pos
            break
        if verify:
            c = crc(buf[pos + 12:stop])
            if ((((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF) != unpack_footer(buf, stop)[0]:
                failure = (ordinal, pos, DATA_CHECK)
                break
        ordinals.append(ordinal)
        positions.append(pos)
        lengths.append(length)
        ordinal, pos = ordinal + 1, stop + 4
        if ordinal >= look_at:
            got, used, look_at = lookout.look(buf, pos, end, ordinal, limit, lengths, stretches)
            ordinal, pos = ordinal + got, pos + used
    block.count, block.consumed = ordinal, pos
    unchecked = _regroup(block, stretches, (ordinals, positions, lengths))
    if verify:
        checks = [_first_bad(s) for s in block.stretches if not s.checked]
        for bad in checks + [_first_bad_loose(block, unchecked)]:
            if bad is not None and (failure is None or bad[0] < failure[0]):
                failure = bad
    if failure is not None:
        block.cut(failure[0], failure[1])
        return block, "corrupt", 0, failure[1:]
    return block, state, need, None


def gather(buf, ordinals, positions, length):
    """A Stretch over a copy of the records of one ``length`` at ``positions`` in ``buf`` (ordinals ascending)."""
    rows = sliding_window_view(np.frombuffer(buf, np.uint8), length + 16)[positions].reshape(-1)
    return Stretch(rows, 0, length + 16, len(positions), length, ordinals=ordinals, origins=positions)


def _regroup(block, stretches, singles):
    """Keeps long stretches; gathers the records of short ones by length into copies where at least BATCH
    share one; the rest, and the singles, are loose. Returns a mask of the loose records not yet checked."""
    short = [s for s in stretches if s.count < BATCH]
    block.stretches = [s for s in stretches if s.count >= BATCH]
    parts = [np.array(singles, dtype=np.int64).reshape(3, -1)]
    parts += [np.stack([s.ordinals(), s.origins(), np.full(s.count, s.length, np.int64)]) for s in short]
    ordinals, positions, lengths = np.concatenate(parts, axis=1)
    loose = np.ones(ordinals.size, dtype=bool)
    if short:
        stepped = parts[0].shape[1]
        sizes, counts = np.unique(lengths[stepped:], return_counts=True)
        for size in sizes[counts >= BATCH].tolist():
            mine = stepped + np.flatnonzero(lengths[stepped:] == size)
            mine = mine[np.argsort(ordinals[mine], kind="stable")]
            block.stretches.append(gather(block.buf, ordinals[mine], positions[mine], size))
            loose[mine] = False
        keep = np.flatnonzero(loose)
        keep = keep[np.argsort(ordinals[keep], kind="stable")]
    else:
        keep = np.arange(ordinals.size)
    block.loose = (ordinals[keep], positions[keep], lengths[keep])
    return keep >= parts[0].shape[1]


def _first_bad(s):
    """(ordinal, position, why) of the first record of stretch ``s`` whose checksums fail, or None; sets
    ``s.varying``."""
    bad_head = np.flatnonzero(s.column("<u4", 8) != _masked(crc32c.crc32c(struct.pack("<Q", s.length))))
    s.checked = True
    if s.count >= BATCH and s.length <= 256:
        s.varying = crc_batch.varying_columns(s.buf, s.pos + 12, s.stride, s.count, s.length)
        crcs = crc_batch.crc32c_many(s.buf, s.pos + 12, s.stride, s.count, s.length, s.varying)
    else:
        buf, stop = s.buf, s.pos + 12 + s.count * s.stride
        crcs = [crc32c.crc32c(bytes(buf[p:p + s.length])) for p in range(s.pos + 12, stop, s.stride)]
    bad_data = np.flatnonzero(crc_batch.mask(crcs) != s.column("<u4", 12 + s.length))
    head = int(bad_head[0]) if bad_head.size else s.count
    data = int(bad_data[0]) if bad_data.size else s.count
    i = min(head, data)
    if i == s.count:
        return None
    return int(s.ordinals()[i]), int(s.origins()[i]), LENGTH_CHECK if head <= data else DATA_CHECK


def _first_bad_loose(block, unchecked):
    """(ordinal, position, why) of the first loose record not yet checked whose checksums fail, or None."""
    buf = block.buf
    for ordinal, pos, length in zip(*(a[unchecked].tolist() for a in block.loose)):
        if _masked(crc32c.crc32c(buf[pos:pos + 8])) != _HEADER.unpack_from(buf, pos)[1]:
            return ordinal, pos, LENGTH_CHECK
        if _masked(crc32c.crc32c(buf[pos + 12:pos + 12 + length])) != _FOOTER.unpack_from(buf, pos + 12 + length)[0]:
            return ordinal, pos, DATA_CHECK
    return None
