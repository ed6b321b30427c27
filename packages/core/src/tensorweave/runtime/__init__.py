"""The execution side: sessions, pruning, graph passes, placement, partitioning, executors, rendezvous,
resources and devices.

It imports only ``framework/`` and the leaf modules (``dtypes``, ``errors``, ``hookspecs``, ``formats/``,
``protos/``, ``records/``), never
``ops/`` or the API: what it must know about an op comes from its OpDef and the registries, and the ops it
inserts itself (feeds, fetches, Send/Recv, fused elementwise trees) are defined here and registered by
``runtime/builtin_plugin.py``. ``tests/core/test_layering.py`` checks it ("How the core is layered" in the README).
"""
