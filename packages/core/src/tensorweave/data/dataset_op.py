"""Adding one dataset op to the graph: its int64 scalar arguments and the structure attrs it carries.

The modules that build dataset ops for ``Dataset`` (batching, generator_source) use these and hand back the
op's ``variant`` output with its element structure; ``dataset_ops.Dataset`` wraps them, so those modules
never import the Dataset class and the package has no import circle.
"""

from tensorweave import dtypes
from tensorweave.data import structure
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.unary_math_ops import cast


def int64_scalar(value, name):
    """``value`` as an int64 tensor; integer tensors of another dtype are cast (TF would refuse them)."""
    if isinstance(value, Tensor) and value.dtype != dtypes.int64 and value.dtype.is_integer:
        return cast(value, dtypes.int64, name=name)
    return convert_to_tensor(value, dtype=dtypes.int64, name=name)


def dataset_variant(op_type, inputs, element_structure, attrs=None, name=None, typed=True):
    """Adds the op and returns its ``variant`` output; ``typed`` ops carry ``output_types`` (others infer them)."""
    attrs = dict(attrs or {})
    if typed:
        attrs.setdefault("output_types", structure.flat_types(element_structure))
    attrs.setdefault("output_shapes", structure.flat_shapes(element_structure))
    return apply_op(op_type, inputs, attrs, name=name)
