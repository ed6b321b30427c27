"""``tf.random``: the random ops under their TF 1.13+ names (uniform, normal, categorical, ...)."""

from tensorweave.ops.candidate_sampling_ops import (  # noqa: F401
    log_uniform_candidate_sampler, uniform_candidate_sampler,
)
from tensorweave.ops.random_ops import (  # noqa: F401
    categorical, gamma, get_seed, multinomial, normal, poisson, set_random_seed, shuffle, truncated_normal, uniform,
)
