"""CPU kernels for Softmax, LogSoftmax, the fused softmax cross-entropies and L2Loss.

Everything shifts by the row maximum first, so large logits never overflow; float32 stays float32.
"""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"L2Loss", "LogSoftmax", "Softmax", "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _log_softmax(x, xp):
    shifted = x - x.max(axis=-1, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))
    return shifted


@KERNELS.register("Softmax")
def _softmax(x, *, xp):
    e = xp.exp(x - x.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


@KERNELS.register("LogSoftmax")
def _log_softmax_kernel(x, *, xp):
    return _log_softmax(x, xp)


@KERNELS.register("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(logits, labels, *, xp):
    if logits.shape != labels.shape or logits.ndim != 2:
        raise ValueError(f"logits and labels must be 2-D and the same shape: logits {list(logits.shape)} vs "
                         f"labels {list(labels.shape)}")
    log_probs = _log_softmax(logits, xp)
    loss = -(labels * log_probs).sum(axis=-1)
    return loss, xp.exp(log_probs) - labels


@KERNELS.register("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent(logits, labels, *, xp):
    if logits.ndim != 2 or labels.ndim != 1 or labels.shape[0] != logits.shape[0]:
        raise ValueError(f"logits must be 2-D and labels 1-D with the same first dimension: logits "
                         f"{list(logits.shape)} vs labels {list(labels.shape)}")
    classes = logits.shape[1]
    bad = (labels < 0) | (labels >= classes)
    if bad.any():
        raise ValueError(f"Received a label value of {int(labels[bad][0])} which is outside the valid range of "
                         f"[0, {classes}). Label values: {' '.join(str(int(v)) for v in labels[:20])}"
                         f"{' ...' if labels.shape[0] > 20 else ''}")
    log_probs = _log_softmax(logits, xp)
    rows = xp.arange(logits.shape[0])
    loss = -log_probs[rows, labels]
    backprop = xp.exp(log_probs)
    backprop[rows, labels] -= 1
    return loss, backprop


@KERNELS.register("L2Loss")
def _l2_loss(t, *, xp):
    flat = t.reshape(-1)
    return xp.asarray(xp.dot(flat, flat) / 2, dtype=t.dtype)
