"""Candidate samplers (uniform, log-uniform/Zipfian) and accidental-hit detection for sampled losses.

Each sampler returns the sampled class ids with the expected number of times each true and sampled
class would be drawn, which nce_loss and sampled_softmax_loss use to correct their logits.
"""

from tensorweave import dtypes
from tensorweave.framework import random_seed, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import unary_math_ops

DEFS = OpDefList()

__all__ = ["uniform_candidate_sampler", "log_uniform_candidate_sampler", "compute_accidental_hits"]

_SAMPLER_ATTRS = ["num_true: int >= 1", "num_sampled: int >= 1", "unique: bool", "range_max: int >= 1",
                  "seed: int = 0", "seed2: int = 0"]
_SAMPLER_OUTPUTS = ["sampled_candidates: int64", "true_expected_count: float32", "sampled_expected_count: float32"]


def _sampler(name, doc):
    op_def = DEFS.define(name, inputs=["true_classes: int64"], outputs=_SAMPLER_OUTPUTS, attrs=_SAMPLER_ATTRS,
                         grad=NOT_DIFFERENTIABLE, is_stateful=True, doc=doc)
    op_def.set_shape_fn(_sampler_shape)
    return op_def


def _sampler_shape(op):
    num_true, num_sampled = op.get_attr("num_true"), op.get_attr("num_sampled")
    if op.get_attr("unique") and num_sampled > op.get_attr("range_max"):
        raise ValueError(f"unique sampling of num_sampled={num_sampled} classes needs range_max >= num_sampled, "
                         f"got range_max={op.get_attr('range_max')}")
    true_classes = op.inputs[0].shape.with_rank(2)
    if not true_classes[1].is_compatible_with(num_true):
        raise ValueError(f"true_classes has {true_classes[1]} columns but num_true is {num_true}")
    sampled = tensor_shape.TensorShape([num_sampled])
    return [sampled, tensor_shape.TensorShape([true_classes[0], num_true]), sampled]


UNIFORM_SAMPLER = _sampler("UniformCandidateSampler", "Samples classes uniformly from [0, range_max).")
LOG_UNIFORM_SAMPLER = _sampler(
    "LogUniformCandidateSampler",
    "Samples class k from [0, range_max) with P(k) = log((k + 2) / (k + 1)) / log(range_max + 1) (Zipfian).")

COMPUTE_ACCIDENTAL_HITS = DEFS.define(
    "ComputeAccidentalHits", inputs=["true_classes: int64", "sampled_candidates: int64"],
    outputs=["indices: int32", "ids: int64", "weights: float32"],
    attrs=["num_true: int", "seed: int = 0", "seed2: int = 0"], grad=NOT_DIFFERENTIABLE,
    doc="(row, sampled position, -FLT_MAX) for every sampled candidate equal to one of its row's true classes.")


@COMPUTE_ACCIDENTAL_HITS.set_shape_fn
def _accidental_hits_shape(op):
    op.inputs[0].shape.with_rank(2)
    op.inputs[1].shape.with_rank(1)
    hits = tensor_shape.TensorShape([None])
    return [hits, hits, hits]


def _seeds(seed):
    seed1, seed2 = random_seed.get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _sample(op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name):
    true_classes = convert_to_tensor(true_classes, name="true_classes")
    if true_classes.dtype != dtypes.int64:
        true_classes = unary_math_ops.cast(true_classes, dtypes.int64)
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
             "range_max": int(range_max), **_seeds(seed)}
    return tuple(apply_op(op_type, [true_classes], attrs, name=name or op_type))


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """(sampled_candidates, true_expected_count, sampled_expected_count) for classes drawn uniformly."""
    return _sample("UniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """As ``uniform_candidate_sampler`` with a Zipfian distribution: suits classes sorted by frequency."""
    return _sample("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(indices, ids, weights): where a sampled candidate is one of its row's true classes, to mask it out."""
    return tuple(apply_op("ComputeAccidentalHits", [true_classes, sampled_candidates],
                          {"num_true": int(num_true), **_seeds(seed)}, name=name or "ComputeAccidentalHits"))
