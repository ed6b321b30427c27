"""The MLP and CNN training steps on a CUDA GPU: Tensorweave (the same TF1 programs as ``mlp`` and ``cnn``,
placed by default, which puts them on GPU:0 when the GPU package sees one) against PyTorch eager on the same
GPU. Each timed step ends with a device-wide synchronize, so a step is its GPU work, not its launch.

Runs only where ``tensorweave_cuda`` has a usable GPU and PyTorch has CUDA; elsewhere it says why and
measures nothing.
"""

import numpy as np

from benchmarks import cnn, mlp
from benchmarks.common import Benchmark, Case, torch_or_none


def _why_not():
    """None when both sides can use a GPU here, else the reason."""
    try:
        from tensorweave_cuda import probe
    except ImportError:
        return "tensorweave-kernels-cuda is not installed"
    status = probe()
    if not status.available:
        return status.reason
    torch = torch_or_none()
    if torch is None or not torch.cuda.is_available():
        return "PyTorch with CUDA is not installed"
    return None


def _synchronized(step, synchronize):
    def run():
        value = step()
        synchronize()
        return value
    return run


def _case(name, module, weights, x, labels):
    import cupy
    torch = torch_or_none()
    torch.backends.cudnn.allow_tf32 = False  # the same float32 arithmetic on both sides
    torch.backends.cuda.matmul.allow_tf32 = False
    ours = module.tensorweave_step(weights, x, labels)
    theirs = module.torch_step(torch, weights, x, labels, device="cuda")
    syncs = {"tensorweave": cupy.cuda.runtime.deviceSynchronize, "pytorch": torch.cuda.synchronize}
    impls = {"tensorweave": ours, "pytorch": theirs}
    check = {n: [with_loss() for _ in range(3)] for n, (_, with_loss) in impls.items()}
    return Case(name, {n: _synchronized(step, syncs[n]) for n, (step, _) in impls.items()}, check=check,
                check_rtol=1e-3)


def run(options):
    reason = _why_not()
    if reason:
        print(f"   skipped: {reason}")
        return []
    cases = []
    for batch in (64, 512):
        rng = np.random.default_rng(batch)
        weights, (x, labels) = mlp.initial_weights(rng), mlp.batch_of(batch, rng)
        cases.append(_case(f"gpu mlp batch {batch}", mlp, weights, x, labels))
    rng = np.random.default_rng(32)
    weights = cnn.initial_weights(rng)
    x = rng.standard_normal((cnn.BATCH, 28, 28, 1)).astype(np.float32)
    labels = rng.integers(0, 10, cnn.BATCH).astype(np.int32)
    cases.append(_case(f"gpu cnn batch {cnn.BATCH}", cnn, weights, x, labels))
    return cases


BENCHMARK = Benchmark("gpu", "MLP and CNN training steps on a CUDA GPU, against PyTorch eager on the same GPU", run)
