"""CPU kernel for CTCBeamSearchDecoder: TF's beam search over label prefixes (a trie of entries holding the
log-probabilities of the prefix ending in a blank or in its label), with TF's pruning: a beam of ``beam_width``
entries, a prefix evicted from it or never admitted reset so it may come back, and ``merge_repeated`` merging
equal neighbours of a found sequence."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")

_ZERO = -np.inf


class _Entry:
    __slots__ = ("parent", "label", "children", "old", "new")

    def __init__(self, parent, label):
        self.parent, self.label, self.children = parent, label, None
        self.old = [_ZERO, _ZERO, _ZERO]  # total, blank, label
        self.new = [_ZERO, _ZERO, _ZERO]

    def active(self):
        return self.new[0] != _ZERO

    def labels(self, merge_repeated):
        out, previous, entry = [], -1, self
        while entry.parent is not None:
            if not merge_repeated or entry.label != previous:
                out.append(entry.label)
            previous, entry = entry.label, entry.parent
        return out[::-1]


class _Beam:
    """The current beam: at most ``width`` entries, the lowest evicted first."""

    def __init__(self, width):
        self.width, self.entries = width, []

    def bottom(self):
        return min(self.entries, key=lambda e: e.new[0])

    def candidate(self, probability):
        return probability[0] > _ZERO and (len(self.entries) < self.width or probability[0] > self.bottom().new[0])

    def push(self, entry):
        if len(self.entries) == self.width:
            bottom = self.bottom()
            bottom.new = [_ZERO, _ZERO, _ZERO]  # no longer in the beam
            self.entries.remove(bottom)
        self.entries.append(entry)

    def extract(self):
        """The entries best first (a stable sort, so ties keep the order they were pushed in)."""
        out = sorted(self.entries, key=lambda e: -e.new[0])
        self.entries = []
        return out


def _step(beam, row, blank):
    norm = row.max() + np.log(np.exp(row - row.max()).sum())
    logp = row - norm
    branches = beam.extract()
    for b in branches:
        b.old = list(b.new)
    for b in branches:
        if b.parent is not None:
            if b.parent.active():
                previous = b.parent.old[1] if b.label == b.parent.label else b.parent.old[0]
                b.new[2] = np.logaddexp(b.new[2], previous)
            b.new[2] += logp[b.label]
        b.new[1] = b.old[0] + logp[blank]
        b.new[0] = np.logaddexp(b.new[1], b.new[2])
        beam.push(b)
    for b in branches:
        if not beam.candidate(b.old):
            continue
        if b.children is None:
            b.children = [_Entry(b, label) for label in range(blank)]
        for c in b.children:
            if c.active():
                continue
            previous = b.old[1] if c.label == b.label else b.old[0]
            c.new = [logp[c.label] + previous, _ZERO, logp[c.label] + previous]
            if beam.candidate(c.new):
                beam.push(c)
            else:
                c.old, c.new = [_ZERO, _ZERO, _ZERO], [_ZERO, _ZERO, _ZERO]


@KERNELS.register("CTCBeamSearchDecoder", dtypes=["float32", "float64"])
def _ctc_beam_search_decoder(inputs, sequence_length, *, beam_width, top_paths, merge_repeated):
    max_time, batch, num_classes = inputs.shape
    if top_paths > beam_width:
        raise ValueError(f"CTCBeamSearchDecoder: top_paths ({top_paths}) must be <= beam_width ({beam_width})")
    paths = [[None] * batch for _ in range(top_paths)]
    log_probability = np.zeros((batch, top_paths), inputs.dtype)
    for b in range(batch):
        steps = int(sequence_length[b])
        if not 0 <= steps <= max_time:
            raise ValueError(f"CTCBeamSearchDecoder: sequence_length({b}) = {steps} is outside [0, {max_time}]")
        root = _Entry(None, -1)
        root.new = [0.0, 0.0, _ZERO]
        beam = _Beam(beam_width)
        beam.push(root)
        for t in range(steps):
            _step(beam, inputs[t, b].astype(np.float64), num_classes - 1)
        best = beam.extract()
        if len(best) < top_paths:
            raise ValueError(f"CTCBeamSearchDecoder: less leaves in the beam search ({len(best)}) than requested "
                             f"top_paths ({top_paths}) for example {b}")
        for p in range(top_paths):
            paths[p][b] = best[p].labels(merge_repeated)
            log_probability[b, p] = best[p].new[0]
    indices, values, shapes = [], [], []
    for decoded in paths:
        indices.append(np.array([[b, i] for b, seq in enumerate(decoded) for i in range(len(seq))],
                                np.int64).reshape(-1, 2))
        values.append(np.array([c for seq in decoded for c in seq], np.int64))
        shapes.append(np.array([batch, max((len(s) for s in decoded), default=0)], np.int64))
    return [*indices, *values, *shapes, log_probability]
