"""Op families: each module keeps its op definitions, shape functions, gradients and Python wrappers.

Ops import only ``framework/``, the leaf modules (``dtypes``, ``errors``, ``hookspecs``, ``formats/``, ``protos/``,
``records/``) and one another, never ``runtime/`` or the API (``train/``, ``layers/``, ...), which sit above them.
An op module imports the family that defines what it uses (``shape_ops.reshape``, ``reduction_ops.reduce_sum``):
there are no namespace modules re-exporting others. The array and math families' gradients build ops of one another,
so those modules import each other as modules (``from tensorweave.ops import shape_ops``) and read names when a
function runs. ``tests/core/test_layering.py`` checks all of it ("How the core is layered" in the README).
"""
