"""CPU kernels for the candidate samplers and ComputeAccidentalHits.

Each sampler node draws from its random-op stream (``random.node_generator``: seeded from its (seed,
seed2) attrs, entropy when both are 0), so a seeded graph draws the same sequence in every session, as TF.
Unique sampling rejects repeats and reports expected counts for the number of draws it took:
1 - (1 - p) ** tries.
"""

import numpy as np

from tensorweave.extension import KernelSet
from tensorweave_cpu.kernels.random import node_generator

KERNELS = KernelSet("CPU")


class _Distribution:
    """P(k) over [0, range_max) and a vectorized draw."""

    def __init__(self, kind, range_max):
        self.kind, self.range_max = kind, range_max
        self._log_range = np.log1p(range_max)

    def probability(self, classes):
        classes = np.asarray(classes, np.float64)
        if self.kind == "uniform":
            return np.full(classes.shape, 1.0 / self.range_max)
        return np.log1p(1.0 / (classes + 1.0)) / self._log_range  # log((k + 2) / (k + 1)) / log(range_max + 1)

    def draw(self, rng, n):
        if self.kind == "uniform":
            return rng.integers(0, self.range_max, size=n, dtype=np.int64)
        values = np.exp(rng.random(n) * self._log_range).astype(np.int64) - 1
        return np.clip(values, 0, self.range_max - 1)


def _draw_unique(distribution, rng, count):
    """``count`` distinct classes in order of first draw, and how many draws that took."""
    draws = np.empty(0, np.int64)
    while True:
        draws = np.concatenate([draws, distribution.draw(rng, max(2 * count, 16))])
        values, first = np.unique(draws, return_index=True)
        if values.size >= count:
            first = np.sort(first)[:count]
            return draws[first], int(first[-1]) + 1


def _expected_count(probability, num_sampled, tries, unique):
    if not unique or tries == num_sampled:
        return probability * num_sampled
    return -np.expm1(tries * np.log1p(-probability))


def _build_sampler(kind):
    def build(node):
        num_sampled, unique, range_max = node.attrs["num_sampled"], node.attrs["unique"], node.attrs["range_max"]
        num_true = node.attrs["num_true"]
        distribution = _Distribution(kind, range_max)
        rng, lock = node_generator(node)
        if unique and num_sampled > range_max:
            raise ValueError(f"unique sampling of num_sampled={num_sampled} needs range_max >= num_sampled, "
                             f"got {range_max}")

        def compute(true_classes):
            if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
                raise ValueError(f"true_classes must be [batch, num_true={num_true}], got {list(true_classes.shape)}")
            with lock:
                if unique:
                    sampled, tries = _draw_unique(distribution, rng, num_sampled)
                else:
                    sampled, tries = distribution.draw(rng, num_sampled), num_sampled
            true_count = _expected_count(distribution.probability(true_classes), num_sampled, tries, unique)
            sampled_count = _expected_count(distribution.probability(sampled), num_sampled, tries, unique)
            return sampled, true_count.astype(np.float32), sampled_count.astype(np.float32)

        return compute

    return build


KERNELS.add("UniformCandidateSampler", build=_build_sampler("uniform"))
KERNELS.add("LogUniformCandidateSampler", build=_build_sampler("log_uniform"))


@KERNELS.register("ComputeAccidentalHits")
def _compute_accidental_hits(true_classes, sampled, *, num_true):
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise ValueError(f"true_classes must be [batch, num_true={num_true}], got {list(true_classes.shape)}")
    hit = (true_classes[:, :, None] == sampled[None, None, :]).any(axis=1)
    rows, positions = np.nonzero(hit)
    weights = np.full(rows.shape, -np.finfo(np.float32).max, np.float32)
    return rows.astype(np.int32), positions.astype(np.int64), weights
