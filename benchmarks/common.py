"""What every benchmark shares: the module contract, interleaved step timing, and the optional PyTorch.

A benchmark module defines ``BENCHMARK = Benchmark(name, title, run)``; ``run(options)`` returns a list of
Cases, each holding one step function per implementation. The suite times the implementations of a case
in the same process, round-robin (so a burst of load elsewhere on the machine hits all of them alike),
and reports medians and ratios.
"""

import dataclasses
import gc
import time

import numpy as np

TORCH_VERSION = "2.13.0"


@dataclasses.dataclass
class Benchmark:
    name: str
    title: str
    run: object  # run(options) -> list[Case]


@dataclasses.dataclass
class Case:
    """One measured setting: ``steps`` maps an implementation name to a zero-argument step function.

    ``unit`` is what one call does ("step", or "op" with ``per_call`` ops per call); ``check`` maps
    implementation names to the value each computed on the same inputs (asserted equal before timing).
    ``times`` holds per-call seconds measured elsewhere (inside an MPI job), reported as they are.
    """

    name: str
    steps: dict
    unit: str = "step"
    per_call: int = 1
    check: dict = dataclasses.field(default_factory=dict)
    check_rtol: float = 1e-4
    note: str = ""
    times: dict = None


@dataclasses.dataclass
class Options:
    rounds: int = 7
    min_seconds: float = 0.25  # per implementation per round
    warmup: int = 5
    only: tuple = ()


def with_tf1(cases, module):
    """``cases`` with a "tf1" implementation added to each that ``module``'s ``tf1_programs`` also builds."""
    from benchmarks import tf1
    reference = tf1.programs(module)
    for case in cases:
        if case.name in reference:
            case.steps["tf1"], case.check["tf1"] = reference[case.name]
    return cases


def torch_or_none():
    """PyTorch when installed (any version; the report names it), else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def tensorweave_sgd_step(model, x, labels, learning_rate, tf=None):
    """(step, step returning the loss) of a TF1 classifier trained by plain SGD, as a user would write it:
    ``model()`` builds (inputs, targets, logits) in a fresh graph, fed ``x`` and ``labels``. ``tf`` is
    Tensorweave unless given (TF1's compat.v1 in the TF1 worker)."""
    if tf is None:
        import tensorweave as tf

    graph = tf.Graph()
    with graph.as_default():
        inputs, targets, logits = model()
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits))
        train = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    feed = {inputs: x, targets: labels}
    return lambda: sess.run(train, feed), lambda: sess.run([loss, train], feed)[0]


def softmax_xent_backward(logits, labels, rows):
    """(mean loss, its gradient over the logits) of sparse softmax cross-entropy, by hand for the numpy
    steps; works in place over ``logits``. ``rows`` is ``np.arange(len(labels))``."""
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    loss = -np.log(probs[rows, labels]).mean()
    probs[rows, labels] -= 1
    probs /= len(labels)
    return loss, probs


def torch_sgd_step(optimizer, loss_of):
    """(step, step returning the loss) of PyTorch eager training: ``loss_of()`` runs the model to its loss."""
    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        optimizer.step()
        return loss

    return step, lambda: float(step().detach())


def measure(case, options):
    """Per-call seconds for each implementation of ``case``: warmed up, then timed round-robin."""
    if case.times is not None:
        return case.times
    for fn in case.steps.values():
        for _ in range(options.warmup):
            fn()
    calls = {name: _calls_for(fn, options.min_seconds) for name, fn in case.steps.items()}
    # the TF1 reference runs in its own process: it times its calls there (``tf1.RemoteStep.timed``)
    times = {name: [] for name in case.steps}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(options.rounds):
            for name, fn in case.steps.items():
                if hasattr(fn, "timed"):
                    times[name] += fn.timed(calls[name])
                    continue
                record = times[name].append
                for _ in range(calls[name]):
                    start = time.perf_counter()
                    fn()
                    record(time.perf_counter() - start)
            gc.collect()
    finally:
        if gc_was_enabled:
            gc.enable()
    return times


def _calls_for(fn, seconds):
    start = time.perf_counter()
    fn()
    once = max(fn.timed(1)[0] if hasattr(fn, "timed") else time.perf_counter() - start, 1e-6)
    return int(min(max(seconds / once, 3), 2000))


def check_agreement(case):
    """Raises if the implementations of ``case`` disagree on the value they computed from the same inputs."""
    values = {name: np.asarray(v, dtype=np.float64) for name, v in case.check.items() if v is not None}
    if len(values) < 2:
        return
    reference_name, reference = next(iter(values.items()))
    for name, value in values.items():
        if not np.allclose(value, reference, rtol=case.check_rtol, atol=case.check_rtol):
            raise AssertionError(f"{case.name}: {name} computed {value.ravel()[:4]} but {reference_name} computed "
                                 f"{reference.ravel()[:4]}; the implementations do not do the same step")


def summarize(case, times):
    """One row per implementation: median and spread in ms per unit, and ratios to numpy, PyTorch and TF1."""
    rows = []
    medians = {name: float(np.median(t)) / case.per_call for name, t in times.items()}
    for name, t in times.items():
        per_unit = np.asarray(t) / case.per_call
        row = {"case": case.name, "implementation": name, "unit": case.unit, "calls": len(t),
               "median_ms": medians[name] * 1e3, "p10_ms": float(np.percentile(per_unit, 10)) * 1e3,
               "p90_ms": float(np.percentile(per_unit, 90)) * 1e3}
        for other in ("numpy", "pytorch", "tf1"):
            if other in medians and other != name:
                row[f"vs_{other}"] = medians[name] / medians[other]
        rows.append(row)
    return rows
