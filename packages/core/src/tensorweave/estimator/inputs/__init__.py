"""``tf.estimator.inputs``: input_fns over in-memory data (numpy; pandas when it is installed)."""

from tensorweave.estimator.inputs.numpy_io import numpy_input_fn  # noqa: F401
from tensorweave.estimator.inputs.pandas_io import pandas_input_fn  # noqa: F401
