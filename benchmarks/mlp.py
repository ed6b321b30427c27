"""MLP training step: 784-256-256-10, ReLU, softmax cross-entropy, plain SGD; batch 64 and 512.

The same step three ways from the same initial weights and batch: a Tensorweave graph written as a TF1
user would (tf.layers.dense, sparse softmax cross-entropy, GradientDescentOptimizer, Session.run with a
feed_dict), hand-written numpy (forward, backward and update, no framework), and PyTorch eager.
"""

import numpy as np

from benchmarks.common import (Benchmark, Case, softmax_xent_backward, tensorweave_sgd_step, torch_or_none,
                               torch_sgd_step, with_tf1)

SIZES = (784, 256, 256, 10)
LEARNING_RATE = 0.01


def initial_weights(rng):
    """Glorot-uniform kernels [in, out] and zero biases, float32."""
    weights = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        weights.append((rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32),
                        np.zeros(fan_out, np.float32)))
    return weights


def batch_of(batch, rng):
    return rng.standard_normal((batch, SIZES[0])).astype(np.float32), rng.integers(0, SIZES[-1], batch).astype(np.int32)


def tensorweave_step(weights, x, labels, tf=None):
    if tf is None:
        import tensorweave as tf

    def model():
        inputs = tf.placeholder(tf.float32, [None, SIZES[0]])
        targets = tf.placeholder(tf.int32, [None])
        h = inputs
        for k, (kernel, bias) in enumerate(weights):
            last = k == len(weights) - 1
            h = tf.layers.dense(h, kernel.shape[1], activation=None if last else tf.nn.relu,
                                kernel_initializer=tf.constant_initializer(kernel),
                                bias_initializer=tf.constant_initializer(bias))
        return inputs, targets, h

    return tensorweave_sgd_step(model, x, labels, LEARNING_RATE, tf)


def numpy_step(weights, x, labels):
    """Forward, backward and SGD by hand, in place where numpy allows."""
    params = [(w.copy(), b.copy()) for w, b in weights]
    rows = np.arange(len(labels))
    lr = np.float32(LEARNING_RATE)

    def step():
        activations = [x]
        for w, b in params[:-1]:
            h = activations[-1] @ w
            h += b
            np.maximum(h, 0, out=h)
            activations.append(h)
        logits = activations[-1] @ params[-1][0]
        logits += params[-1][1]
        loss, delta = softmax_xent_backward(logits, labels, rows)
        for k in range(len(params) - 1, -1, -1):
            w, b = params[k]
            grad_w = activations[k].T @ delta
            grad_b = delta.sum(axis=0)
            if k:
                delta = delta @ w.T
                delta *= activations[k] > 0
            w -= lr * grad_w
            b -= lr * grad_b
        return loss

    return step, step


def torch_step(torch, weights, x, labels, device="cpu"):
    layers = []
    for k, (kernel, bias) in enumerate(weights):
        linear = torch.nn.Linear(*kernel.shape)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(kernel.T.copy()))
            linear.bias.copy_(torch.from_numpy(bias))
        layers += [linear] if k == len(weights) - 1 else [linear, torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    inputs, targets = torch.from_numpy(x).to(device), torch.from_numpy(labels.astype(np.int64)).to(device)

    return torch_sgd_step(optimizer, lambda: torch.nn.functional.cross_entropy(model(inputs), targets))


def implementations(weights, x, labels):
    """name -> (step, step returning the loss before its update)."""
    impls = {"tensorweave": tensorweave_step(weights, x, labels), "numpy": numpy_step(weights, x, labels)}
    torch = torch_or_none()
    if torch is not None:
        impls["pytorch"] = torch_step(torch, weights, x, labels)
    return impls


def tf1_programs(tf):
    programs = {}
    for batch in (64, 512):
        rng = np.random.default_rng(batch)
        weights, (x, labels) = initial_weights(rng), batch_of(batch, rng)
        step, with_loss = tensorweave_step(weights, x, labels, tf)
        programs[f"mlp batch {batch}"] = (step, [with_loss() for _ in range(3)])
    return programs


def run(options):
    cases = []
    for batch in (64, 512):
        rng = np.random.default_rng(batch)
        weights, (x, labels) = initial_weights(rng), batch_of(batch, rng)
        impls = implementations(weights, x, labels)
        check = {name: [with_loss() for _ in range(3)] for name, (_, with_loss) in impls.items()}
        cases.append(Case(f"mlp batch {batch}", {name: step for name, (step, _) in impls.items()}, check=check))
    return with_tf1(cases, __name__)


BENCHMARK = Benchmark("mlp", "MLP training step (784-256-256-10, ReLU, softmax cross-entropy, SGD)", run)
