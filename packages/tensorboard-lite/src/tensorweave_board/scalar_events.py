"""Plain scalar events, what FileWriter, TensorFlow, tensorboardX and PyTorch write for scalars, decoded many
at a time from their bytes instead of one protobuf parse per record.

A record takes this path only if it is laid out byte for byte as protobuf serializes such an event:

    09 <wall_time: 8> [10 <step: varint, 1-9 bytes>] 2A <S> 0A <S-2> 0A <T> <tag: T bytes> 15 <simple_value: 4>

By the wire format these bytes parse to Event{wall_time, step, summary{value[{tag, simple_value}]}} and
nothing else: every field appears once, each length covers exactly what follows it, the step is a
non-negative int64 and the tag valid UTF-8. Decoding the fixed places therefore gives protobuf's numbers
(tests compare both on varied events). Everything else, however close, is left to protobuf.

The records of a stretch (one length, regularly placed: see ``framing``) share the layout of their
first record if they agree with it in every byte outside the wall time, step, tag and value, and their
step has the same number of bytes; that is checked vectorized, only on the bytes that vary.
"""

import numpy as np

from tensorweave_board.crc_batch import varying_columns
from tensorweave_board.framing import gather

MAX_TAGS = 64  # distinct tags sorted out vectorized in one stretch; the records of any more go to protobuf
MAX_LAYOUTS = 4  # layouts (or non-scalar records) tried per stretch before the rest goes to protobuf
MIN_STRETCH = 32  # shorter stretches are left to protobuf


class Layout:
    """Where the fields of a plain scalar event lie in its record (byte positions in the data)."""

    __slots__ = ("step_at", "step_len", "tag_at", "tag_len", "value_at", "tag")

    def __init__(self, step_at, step_len, tag_at, tag_len, tag):
        self.step_at, self.step_len, self.tag_at, self.tag_len, self.tag = step_at, step_len, tag_at, tag_len, tag
        self.value_at = tag_at + tag_len + 1

    def free(self):
        """The positions that may differ between records of this layout: wall time, step, tag, value."""
        return {*range(1, 9), *range(self.step_at, self.step_at + self.step_len),
                *range(self.tag_at, self.tag_at + self.tag_len), *range(self.value_at, self.value_at + 4)}


def layout(data):
    """The Layout of ``data`` if it is a plain scalar event laid out as above, else None."""
    n = len(data)
    if n < 9 or data[0] != 0x09:
        return None
    p, step_at, step_len = 9, 10, 0
    if p < n and data[p] == 0x10:
        q = p + 1
        while q < n and data[q] & 0x80:
            q += 1
        step_len = q - p
        if q >= n or step_len > 9:  # ten bytes: a negative step, left to protobuf
            return None
        p = q + 1
    if n - p < 6 or data[p] != 0x2A or data[p + 2] != 0x0A or data[p + 4] != 0x0A:
        return None
    size, value_size, tag_len = data[p + 1], data[p + 3], data[p + 5]
    if size >= 0x80 or size != n - p - 2 or value_size != size - 2 or tag_len != value_size - 7:
        return None  # (a length of one byte below 0x80 is a whole varint: the nested lengths are exact)
    tag_at = p + 6
    if data[tag_at + tag_len] != 0x15:
        return None
    try:
        tag = bytes(data[tag_at:tag_at + tag_len]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return Layout(step_at, step_len, tag_at, tag_len, tag)


class ScalarColumns:
    """Decoded scalar points in record order: ``ordinals`` (records in the block), ``tag_ids`` (into
    ``tags``), ``steps`` (int64), ``walls`` and ``values`` (float64)."""

    def __init__(self, ordinals, tag_ids, tags, steps, walls, values):
        self.ordinals, self.tag_ids, self.tags = ordinals, tag_ids, tags
        self.steps, self.walls, self.values = steps, walls, values

    def __len__(self):
        return len(self.ordinals)


def _tag_ids(s, lay, varying, ok, tags):
    """Tag id of each record of stretch ``s`` (-1: not decoded here); clears ``ok`` where a tag is unusable."""
    tag_cols = [j for j in range(lay.tag_at, lay.tag_at + lay.tag_len) if varying[j]]
    if not tag_cols:
        return np.full(s.count, tags.setdefault(lay.tag, len(tags)), dtype=np.int64)
    ids = np.full(s.count, -1, dtype=np.int64)
    pending = ok.copy()
    cols = {j: s.column(np.uint8, 12 + j) for j in tag_cols}
    for _ in range(MAX_TAGS):
        left = np.flatnonzero(pending)
        if not left.size:
            break
        tag = _record(s, int(left[0]))[lay.tag_at:lay.tag_at + lay.tag_len]
        same = pending.copy()
        for j, col in cols.items():
            same &= col == tag[j - lay.tag_at]
        pending &= ~same
        try:
            ids[same] = tags.setdefault(tag.decode("utf-8"), len(tags))
        except UnicodeDecodeError:
            ok &= ~same
    ok &= ~pending
    return ids


def _record(s, i):
    at = s.pos + 12 + i * s.stride
    return bytes(s.buf[at:at + s.length])


def _matching(s, model, lay, varying, candidates):
    """Which of the ``candidates`` records agree with ``model`` outside its free bytes, varint lengths
    included. Bytes that do not vary in the stretch agree already."""
    ok = candidates.copy()
    free = lay.free()
    for j in np.flatnonzero(varying).tolist():
        if j in free and not lay.step_at <= j < lay.step_at + lay.step_len:
            continue
        col = s.column(np.uint8, 12 + j)
        if j not in free:
            ok &= col == model[j]
        else:  # a step byte: the same continuation bit, so the same number of bytes
            ok &= (col & 0x80) == (model[j] & 0x80)
    return ok


def _decode_stretch(s, tags):
    """(record indices, tag ids, steps, walls, values) of the plain scalar events of stretch ``s``; the
    layout of the first record not yet decoded is tried on the rest, a few times (equally long records
    may be laid out differently: a step one byte longer and a tag one byte shorter)."""
    varying, remaining, found = s.varying, np.ones(s.count, dtype=bool), []
    for _ in range(MAX_LAYOUTS):
        left = np.flatnonzero(remaining)
        if not left.size:
            break
        model = _record(s, int(left[0]))
        lay = layout(model)
        if lay is None:
            remaining[left[0]] = False  # left to protobuf
            continue
        if varying is None:
            varying = s.varying = varying_columns(s.buf, s.pos + 12, s.stride, s.count, s.length)
        ok = _matching(s, model, lay, varying, remaining)
        ids = _tag_ids(s, lay, varying, ok, tags)
        remaining &= ~ok
        index = np.flatnonzero(ok)

        def pick(dtype, at):
            field = s.column(dtype, 12 + at)
            return field if index.size == s.count else field[index]

        steps = np.zeros(index.size, dtype=np.uint64)
        for b in range(lay.step_len):
            steps |= (pick(np.uint8, lay.step_at + b).astype(np.uint64) & np.uint64(0x7F)) << np.uint64(7 * b)
        found.append((index, ids[index], steps.view(np.int64), pick("<f8", 1).astype(np.float64),
                      pick("<f4", lay.value_at).astype(np.float64)))
    if not found:
        return None
    return found[0] if len(found) == 1 else tuple(np.concatenate(c) for c in zip(*found))


def _gathered(block):
    """Stretches over copies of the loose records of each length shared by MIN_STRETCH or more whose first
    few records include a plain scalar event; the other loose records as (ordinals, positions, lengths)."""
    ordinals, positions, lengths = block.loose
    sizes, counts = np.unique(lengths, return_counts=True)
    stretches, rest = [], np.ones(ordinals.size, dtype=bool)
    for size in sizes[counts >= MIN_STRETCH].tolist():
        mine = np.flatnonzero(lengths == size)
        heads = positions[mine[:MAX_LAYOUTS]].tolist()
        if all(layout(block.buf[p + 12:p + 12 + size]) is None for p in heads):
            continue
        stretches.append(gather(block.buf, ordinals[mine], positions[mine], size))
        rest[mine] = False
    return stretches, np.stack([a[rest] for a in block.loose])


def decode(block):
    """Splits a verified ``framing.Block`` into its plain scalar events, decoded (ScalarColumns), and the
    rest: (ordinals, positions, lengths) of the records to parse with protobuf, in order."""
    gathered, loose = _gathered(block)
    tags, parts, rest = {}, [], [loose]
    for s in sorted(block.stretches + gathered, key=lambda s: int(s.ordinals()[0])):  # parts mostly in order
        found = _decode_stretch(s, tags) if s.count >= MIN_STRETCH else None
        left = np.ones(s.count, dtype=bool)
        if found is not None:
            parts.append((s.ordinals()[found[0]], *found[1:]))
            left[found[0]] = False
        if left.any():
            rest.append(np.stack([s.ordinals()[left], s.origins()[left], np.full(int(left.sum()), s.length)]))
    if parts:
        ordinals, ids, steps, walls, values = parts[0] if len(parts) == 1 else (np.concatenate(c) for c in zip(*parts))
        if ordinals.size > 1 and not (ordinals[1:] > ordinals[:-1]).all():
            order = np.argsort(ordinals, kind="stable")
            ordinals, ids, steps, walls, values = (a[order] for a in (ordinals, ids, steps, walls, values))
    else:
        ordinals, ids, steps, walls, values = (np.zeros(0, dtype=t) for t in ("i8", "i8", "i8", "f8", "f8"))
    names = sorted(tags, key=tags.get)
    slow = np.concatenate(rest, axis=1)
    slow = slow[:, np.argsort(slow[0], kind="stable")]
    return ScalarColumns(ordinals, ids, names, steps, walls, values), slow
