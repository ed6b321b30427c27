"""LSTM training step: 20 time steps, batch 32, 32 inputs, 128 units, a 10-way softmax on the last state, SGD.

Tensorweave runs a TF1 static-unrolled LSTM (one matmul of [x, h] per step, gates i, f, o, g, as in
examples/lstm_sequence.py) through Session.run; numpy is the same cell with backpropagation through time
by hand; PyTorch runs torch.nn.LSTM (its fused cell) with the same weights.
"""

import numpy as np

from benchmarks.common import (Benchmark, Case, softmax_xent_backward, tensorweave_sgd_step, torch_or_none,
                               torch_sgd_step, with_tf1)

STEPS, BATCH, INPUTS, UNITS, CLASSES = 20, 32, 32, 128, 10
LEARNING_RATE = 0.05


def initial_weights(rng):
    scale = 1.0 / np.sqrt(INPUTS + UNITS)
    bias = np.zeros(4 * UNITS, np.float32)
    bias[UNITS:2 * UNITS] = 1.0  # forget gate
    return {"kernel": rng.uniform(-scale, scale, (INPUTS + UNITS, 4 * UNITS)).astype(np.float32), "bias": bias,
            "out_kernel": rng.uniform(-scale, scale, (UNITS, CLASSES)).astype(np.float32),
            "out_bias": np.zeros(CLASSES, np.float32)}


def tensorweave_step(weights, x, labels, tf=None):
    if tf is None:
        import tensorweave as tf

    def model():
        inputs = tf.placeholder(tf.float32, [STEPS, BATCH, INPUTS])
        targets = tf.placeholder(tf.int32, [BATCH])
        kernel, bias, out_kernel, out_bias = (tf.Variable(weights[k]) for k in ("kernel", "bias", "out_kernel",
                                                                                 "out_bias"))
        h = c = tf.zeros([BATCH, UNITS])
        for x_t in tf.unstack(inputs):
            z = tf.nn.bias_add(tf.matmul(tf.concat([x_t, h], 1), kernel), bias)
            i, f, o, g = tf.split(z, 4, axis=1)
            c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
            h = tf.sigmoid(o) * tf.tanh(c)
        logits = tf.nn.bias_add(tf.matmul(h, out_kernel), out_bias)
        return inputs, targets, logits

    return tensorweave_sgd_step(model, x, labels, LEARNING_RATE, tf)


def _sigmoid(z):
    out = np.negative(z)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def numpy_step(weights, x, labels):
    p = {k: v.copy() for k, v in weights.items()}
    rows = np.arange(BATCH)
    lr = np.float32(LEARNING_RATE)
    u = UNITS

    def step():
        h = np.zeros((BATCH, u), np.float32)
        c = np.zeros((BATCH, u), np.float32)
        saved = []
        for t in range(STEPS):
            xh = np.concatenate([x[t], h], axis=1)
            z = xh @ p["kernel"]
            z += p["bias"]
            gates = _sigmoid(z[:, :3 * u])
            g = np.tanh(z[:, 3 * u:])
            c_prev = c
            c = gates[:, u:2 * u] * c_prev + gates[:, :u] * g
            tanh_c = np.tanh(c)
            h = gates[:, 2 * u:] * tanh_c
            saved.append((xh, gates, g, c_prev, tanh_c))
        logits = h @ p["out_kernel"] + p["out_bias"]
        loss, d_logits = softmax_xent_backward(logits, labels, rows)
        grads = {"out_kernel": h.T @ d_logits, "out_bias": d_logits.sum(axis=0),
                 "kernel": np.zeros_like(p["kernel"]), "bias": np.zeros_like(p["bias"])}
        dh = d_logits @ p["out_kernel"].T
        dc = np.zeros_like(dh)
        dz = np.empty((BATCH, 4 * u), np.float32)
        for xh, gates, g, c_prev, tanh_c in reversed(saved):
            i, f, o = gates[:, :u], gates[:, u:2 * u], gates[:, 2 * u:]
            dc += dh * o * (1 - tanh_c * tanh_c)
            dz[:, :u] = dc * g * i * (1 - i)
            dz[:, u:2 * u] = dc * c_prev * f * (1 - f)
            dz[:, 2 * u:3 * u] = dh * tanh_c * o * (1 - o)
            dz[:, 3 * u:] = dc * i * (1 - g * g)
            grads["kernel"] += xh.T @ dz
            grads["bias"] += dz.sum(axis=0)
            dh = dz @ p["kernel"][INPUTS:].T
            dc *= f
        for k, grad in grads.items():
            p[k] -= lr * grad
        return loss

    return step, step


def torch_step(torch, weights, x, labels):
    lstm = torch.nn.LSTM(INPUTS, UNITS)
    readout = torch.nn.Linear(UNITS, CLASSES)
    # Our gate blocks are (i, f, o, g); torch's are (i, f, g, o).
    order = np.concatenate([np.arange(k * UNITS, (k + 1) * UNITS) for k in (0, 1, 3, 2)])
    kernel = weights["kernel"][:, order]
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(np.ascontiguousarray(kernel[:INPUTS].T)))
        lstm.weight_hh_l0.copy_(torch.from_numpy(np.ascontiguousarray(kernel[INPUTS:].T)))
        lstm.bias_ih_l0.copy_(torch.from_numpy(weights["bias"][order]))
        lstm.bias_hh_l0.zero_()
        readout.weight.copy_(torch.from_numpy(np.ascontiguousarray(weights["out_kernel"].T)))
        readout.bias.copy_(torch.from_numpy(weights["out_bias"]))
    lstm.bias_hh_l0.requires_grad_(False)  # one bias, as the other implementations have
    optimizer = torch.optim.SGD([p for p in (*lstm.parameters(), *readout.parameters()) if p.requires_grad],
                                lr=LEARNING_RATE)
    inputs, targets = torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))

    def loss_of():
        _, (h, _) = lstm(inputs)
        return torch.nn.functional.cross_entropy(readout(h[0]), targets)

    return torch_sgd_step(optimizer, loss_of)


def _inputs():
    rng = np.random.default_rng(20)
    weights = initial_weights(rng)
    x = rng.standard_normal((STEPS, BATCH, INPUTS)).astype(np.float32)
    return weights, x, rng.integers(0, CLASSES, BATCH).astype(np.int32)


def tf1_programs(tf):
    step, with_loss = tensorweave_step(*_inputs(), tf=tf)
    return {f"lstm {STEPS} steps batch {BATCH}": (step, [with_loss() for _ in range(3)])}


def run(options):
    weights, x, labels = _inputs()
    impls = {"tensorweave": tensorweave_step(weights, x, labels), "numpy": numpy_step(weights, x, labels)}
    torch = torch_or_none()
    if torch is not None:
        impls["pytorch"] = torch_step(torch, weights, x, labels)
    check = {name: [with_loss() for _ in range(3)] for name, (_, with_loss) in impls.items()}
    return with_tf1([Case(f"lstm {STEPS} steps batch {BATCH}", {name: step for name, (step, _) in impls.items()},
                          check=check)], __name__)


BENCHMARK = Benchmark("lstm", f"LSTM training step ({STEPS} steps, batch {BATCH}, {INPUTS} inputs, {UNITS} units, "
                              f"softmax on the last state, SGD)", run)
