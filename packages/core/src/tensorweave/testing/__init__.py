"""Test helpers that ship with the core, so an op (a plugin's included) is tested in one line.

``check_op`` compares an op against a numpy reference over several shapes and dtypes;
``compute_gradient`` / ``compute_gradient_error`` (TF1's names) and ``check_gradients`` compare
symbolic gradients with central finite differences in float64.
"""

from tensorweave.testing.gradient_checker import check_gradients, compute_gradient, compute_gradient_error  # noqa: F401
from tensorweave.testing.op_checker import check_op, random_input  # noqa: F401
