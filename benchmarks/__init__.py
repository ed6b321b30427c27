"""The benchmark suite: ``python -m benchmarks`` (``make bench``) runs every benchmark module and reports.

A module of this package is a benchmark when it defines ``BENCHMARK`` (a ``common.Benchmark``); the suite
finds them itself, so a new benchmark is one new module.
"""

import importlib
import pkgutil

from benchmarks.common import Benchmark


def discover():
    """Every ``BENCHMARK`` defined by a module of this package, by name; (name, error) for modules that fail."""
    found, failed = {}, []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in ("common", "report", "machine", "targets", "tf1"):
            continue
        try:
            module = importlib.import_module(f"{__name__}.{info.name}")
        except Exception as e:  # a broken module must not take the suite down
            failed.append((info.name, f"{type(e).__name__}: {e}"))
            continue
        benchmark = getattr(module, "BENCHMARK", None)
        if isinstance(benchmark, Benchmark):
            found[benchmark.name] = benchmark
    return found, failed
