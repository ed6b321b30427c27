"""Sizes for an OpDef's ``flops_fn(node)``: a plan node's static shapes, unknown dimensions counted as
UNKNOWN_DIM, so an op's cost estimate sits beside its definition and reads as the cost model's own."""

UNKNOWN_DIM = 1  # a dimension unknown before the run counts as this many elements


def num_elements(shape):
    """Elements of a static shape; unknown dimensions count as UNKNOWN_DIM, unknown rank as one."""
    dims = None if shape is None else shape.as_tuple()
    if dims is None:
        return 1
    n = 1
    for d in dims:
        n *= UNKNOWN_DIM if d is None else d
    return n


def input_dims(node, i):
    """The dimensions of the node's input ``i`` (unknown ones as UNKNOWN_DIM), or None for an unknown rank."""
    src, slot = node.inputs[i]
    shape = src.output_shapes[slot]
    dims = None if shape is None else shape.as_tuple()
    return None if dims is None else [UNKNOWN_DIM if d is None else d for d in dims]
