"""The graph-building side: graphs, operations and tensors, op definitions and the registries plugins fill,
shapes, device names, converting values to tensors, GraphDefs, and the default graph and session stacks.

The bottom layer of the core: it imports only the leaf modules (``dtypes``, ``errors``, ``hookspecs``, the
on-disk formats in ``formats/``, TF's protos in ``protos/`` and TFRecord files in ``records/``), never ``ops/``, ``runtime/`` or the API above them. What a lower layer needs
from above comes in through a registry: ops register tensor and fetch conversions here, and
``tensorweave.plugins`` installs the loader behind ``registry.get_registries()``. ``tests/core/test_layering.py``
reads every import of the tree and fails on one that goes up ("How the core is layered" in the README).
"""
