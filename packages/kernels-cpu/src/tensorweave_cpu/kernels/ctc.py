"""CPU kernels for CTCLoss (the forward-backward algorithm in log space, per example, vectorized over the label
states) and CTCGreedyDecoder, following TF's ctc_loss_calculator: blank is the last class; without
``ctc_merge_repeated`` a non-blank state may not repeat and equal neighbours may be skipped between."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")

_FLOATS = ["float32", "float64"]


def _log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _labels_by_example(indices, values, batch):
    """Each example's label sequence (row b of the sparse labels, in column order)."""
    labels = [[] for _ in range(batch)]
    for (row, _), value in zip(np.asarray(indices).reshape(-1, 2), np.asarray(values).reshape(-1)):
        if not 0 <= row < batch:
            raise ValueError(f"CTCLoss: labels index row {row} is outside the batch of {batch}")
        labels[row].append(int(value))
    return labels


def _collapse(labels):
    return [c for i, c in enumerate(labels) if i == 0 or c != labels[i - 1]]


def _transitions(l_prime, blank, merge_repeated):
    """Masks over the extended labels: may a state stay put, and may it be reached from two states back."""
    states = np.asarray(l_prime)
    stay = np.ones(len(states), bool) if merge_repeated else states == blank
    skip = np.zeros(len(states), bool)
    if len(states) > 2:
        same = states[2:] == states[:-2]
        skip[2:] = (states[2:] != blank) & ~(same & merge_repeated)
    return stay, skip


def _forward_backward(lp, l_prime, stay, skip):
    """log alpha and log beta ([T, S]), both including the emission at t, as TF's calculator."""
    steps, states = lp.shape[0], len(l_prime)
    emit = lp[:, l_prime]
    alpha = np.full((steps, states), -np.inf)
    beta = np.full((steps, states), -np.inf)
    alpha[0, :min(2, states)] = emit[0, :min(2, states)]
    for t in range(1, steps):
        prev = alpha[t - 1]
        terms = [np.where(stay, prev, -np.inf), np.concatenate([[-np.inf], prev[:-1]]),
                 np.where(skip, np.concatenate([[-np.inf, -np.inf], prev[:-2]]), -np.inf)]
        alpha[t] = np.logaddexp.reduce(np.stack(terms), axis=0) + emit[t]
    beta[-1, max(states - 2, 0):] = emit[-1, max(states - 2, 0):]
    skip_from = np.concatenate([skip[2:], [False, False]])  # state s may go to s + 2
    stay_at = stay
    for t in range(steps - 2, -1, -1):
        nxt = beta[t + 1]
        terms = [np.where(stay_at, nxt, -np.inf), np.concatenate([nxt[1:], [-np.inf]]),
                 np.where(skip_from, np.concatenate([nxt[2:], [-np.inf, -np.inf]]), -np.inf)]
        beta[t] = np.logaddexp.reduce(np.stack(terms), axis=0) + emit[t]
    return alpha, beta


@KERNELS.register("CTCLoss", dtypes=_FLOATS)
def _ctc_loss(inputs, labels_indices, labels_values, sequence_length, *, preprocess_collapse_repeated,
              ctc_merge_repeated, ignore_longer_outputs_than_inputs):
    max_time, batch, num_classes = inputs.shape
    blank = num_classes - 1
    if len(sequence_length) != batch:
        raise ValueError(f"CTCLoss: len(sequence_length) {len(sequence_length)} != batch_size {batch}")
    loss = np.zeros(batch, inputs.dtype)
    gradient = np.zeros(inputs.shape, inputs.dtype)
    for b, labels in enumerate(_labels_by_example(labels_indices, labels_values, batch)):
        steps = int(sequence_length[b])
        if not 0 <= steps <= max_time:
            raise ValueError(f"CTCLoss: sequence_length({b}) = {steps} is outside [0, max_time = {max_time}]")
        if preprocess_collapse_repeated:
            labels = _collapse(labels)
        if any(not 0 <= c < blank for c in labels):
            raise ValueError(f"CTCLoss: example {b} has a label outside [0, num_classes - 1 = {blank}) (the last "
                             f"class is the blank): {labels}")
        required = len(labels)  # as TF: repeats needing a blank between make the loss infinite, not an error
        if required > steps:
            if ignore_longer_outputs_than_inputs:
                continue
            raise ValueError(f"CTCLoss: not enough time for target transition sequence (required: {required}, "
                             f"available: {steps}) in example {b}; pass ignore_longer_outputs_than_inputs=True to "
                             f"give such examples a zero loss and gradient")
        if steps == 0:
            continue
        lp = _log_softmax(inputs[:steps, b].astype(np.float64))
        l_prime = [blank] + [x for c in labels for x in (c, blank)]
        stay, skip = _transitions(l_prime, blank, ctc_merge_repeated)
        alpha, beta = _forward_backward(lp, l_prime, stay, skip)
        log_p = np.logaddexp.reduce(alpha[-1, max(len(l_prime) - 2, 0):])
        loss[b] = -log_p
        posterior = np.zeros((steps, num_classes))
        if np.isfinite(log_p):  # no path at all: an infinite loss, and the gradient TF gives (the softmax)
            occupancy = np.exp(alpha + beta - lp[:, l_prime] - log_p)  # P(state s at t | labels)
            np.add.at(posterior.T, np.asarray(l_prime), occupancy.T)
        gradient[:steps, b] = np.exp(lp) - posterior
    return loss, gradient


@KERNELS.register("CTCGreedyDecoder", dtypes=_FLOATS)
def _ctc_greedy_decoder(inputs, sequence_length, *, merge_repeated):
    max_time, batch, num_classes = inputs.shape
    blank = num_classes - 1
    decoded, log_probability = [], np.zeros((batch, 1), inputs.dtype)
    for b in range(batch):
        steps = int(sequence_length[b])
        if not 0 <= steps <= max_time:
            raise ValueError(f"CTCGreedyDecoder: sequence_length({b}) = {steps} is outside [0, {max_time}]")
        best = inputs[:steps, b].argmax(axis=-1)
        log_probability[b, 0] = -inputs[:steps, b].max(axis=-1).sum() if steps else 0
        out, previous = [], -1
        for c in best.tolist():
            if c != blank and not (merge_repeated and c == previous):
                out.append(c)
            previous = c
        decoded.append(out)
    indices = np.array([[b, i] for b, seq in enumerate(decoded) for i in range(len(seq))], np.int64).reshape(-1, 2)
    values = np.array([c for seq in decoded for c in seq], np.int64)
    shape = np.array([batch, max((len(s) for s in decoded), default=0)], np.int64)
    return indices, values, shape, log_probability
