"""LeNet-style CNN training step, batch 32: 28x28x1 -> conv 5x5x32 -> max-pool 2 -> conv 5x5x64 -> max-pool 2
-> dense 128 -> dense 10, ReLU, softmax cross-entropy, SGD.

Tensorweave runs the TF1 program (tf.nn.conv2d, max_pool, bias_add, GradientDescentOptimizer) with a
feed_dict; numpy is a hand-written im2col implementation (strided-view windows, one GEMM per convolution,
col2im by window offset); PyTorch is the same network in eager mode (NCHW, its own kernels).
"""

import numpy as np

from benchmarks.common import (Benchmark, Case, softmax_xent_backward, tensorweave_sgd_step, torch_or_none,
                               torch_sgd_step, with_tf1)

BATCH = 32
LEARNING_RATE = 0.01
CONVS = ((5, 1, 32), (5, 32, 64))  # kernel size, in, out
DENSE = ((7 * 7 * 64, 128), (128, 10))


def initial_weights(rng):
    """Conv filters [kh, kw, in, out] and dense kernels [in, out] (Glorot uniform), zero biases, float32."""
    weights = []
    for k, cin, cout in CONVS:
        limit = np.sqrt(6.0 / (k * k * (cin + cout)))
        weights.append((rng.uniform(-limit, limit, (k, k, cin, cout)).astype(np.float32), np.zeros(cout, np.float32)))
    for fan_in, fan_out in DENSE:
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        weights.append((rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32), np.zeros(fan_out, np.float32)))
    return weights


def tensorweave_step(weights, x, labels, tf=None):
    if tf is None:
        import tensorweave as tf

    def model():
        images = tf.placeholder(tf.float32, [None, 28, 28, 1])
        targets = tf.placeholder(tf.int32, [None])
        variables = [(tf.Variable(w), tf.Variable(b)) for w, b in weights]
        h = images
        for w, b in variables[:2]:
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME"), b))
            h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.reshape(h, [-1, DENSE[0][0]])
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(h, variables[2][0]), variables[2][1]))
        logits = tf.nn.bias_add(tf.matmul(h, variables[3][0]), variables[3][1])
        return images, targets, logits

    return tensorweave_sgd_step(model, x, labels, LEARNING_RATE, tf)


# ---- hand-written numpy ----------------------------------------------------------------------------------------
def _windows(padded, k):
    """[N, H, W, k, k, C] view of every k x k window of an already padded NHWC array."""
    n, hp, wp, c = padded.shape
    s = padded.strides
    return np.lib.stride_tricks.as_strided(padded, (n, hp - k + 1, wp - k + 1, k, k, c), (s[0], s[1], s[2], s[1], s[2], s[3]),
                                           writeable=False)


def _conv_forward(x, w, b):
    k, pad = w.shape[0], w.shape[0] // 2
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    columns = _windows(padded, k).reshape(-1, k * k * x.shape[3])
    out = columns @ w.reshape(-1, w.shape[3])
    out += b
    np.maximum(out, 0, out=out)
    return out.reshape(x.shape[:3] + (w.shape[3],)), columns


def _conv_backward(dy, x_shape, w, columns, need_dx):
    k, pad = w.shape[0], w.shape[0] // 2
    dy_rows = dy.reshape(-1, w.shape[3])
    dw = (columns.T @ dy_rows).reshape(w.shape)
    db = dy_rows.sum(axis=0)
    if not need_dx:
        return None, dw, db
    n, h, width, c = x_shape
    d_columns = (dy_rows @ w.reshape(-1, w.shape[3]).T).reshape(n, h, width, k, k, c)
    d_padded = np.zeros((n, h + 2 * pad, width + 2 * pad, c), np.float32)
    for i in range(k):
        for j in range(k):
            d_padded[:, i:i + h, j:j + width, :] += d_columns[:, :, :, i, j, :]
    return d_padded[:, pad:pad + h, pad:pad + width, :], dw, db


def _pool_forward(x):
    n, h, w, c = x.shape
    blocks = x.reshape(n, h // 2, 2, w // 2, 2, c)
    out = blocks.max(axis=(2, 4))
    return out, blocks == out[:, :, None, :, None, :]


def _pool_backward(dy, mask):
    return (mask * dy[:, :, None, :, None, :]).reshape(mask.shape[0], mask.shape[1] * 2, mask.shape[3] * 2, -1)


def numpy_step(weights, x, labels):
    params = [(w.copy(), b.copy()) for w, b in weights]
    rows = np.arange(len(labels))
    lr = np.float32(LEARNING_RATE)

    def step():
        (w1, b1), (w2, b2), (w3, b3), (w4, b4) = params
        c1, cols1 = _conv_forward(x, w1, b1)
        p1, mask1 = _pool_forward(c1)
        c2, cols2 = _conv_forward(p1, w2, b2)
        p2, mask2 = _pool_forward(c2)
        flat = p2.reshape(len(x), -1)
        h3 = flat @ w3
        h3 += b3
        np.maximum(h3, 0, out=h3)
        logits = h3 @ w4
        logits += b4
        loss, d = softmax_xent_backward(logits, labels, rows)
        grads = [None] * 4
        grads[3] = (h3.T @ d, d.sum(axis=0))
        d = d @ w4.T
        d *= h3 > 0
        grads[2] = (flat.T @ d, d.sum(axis=0))
        d = (d @ w3.T).reshape(p2.shape)
        d = _pool_backward(d, mask2) * (c2 > 0)
        dp1, *grads[1] = _conv_backward(d, p1.shape, w2, cols2, need_dx=True)
        d = _pool_backward(dp1, mask1) * (c1 > 0)
        _, *grads[0] = _conv_backward(d, x.shape, w1, cols1, need_dx=False)
        for (w, b), (gw, gb) in zip(params, grads):
            w -= lr * gw
            b -= lr * gb
        return loss

    return step, step


def torch_step(torch, weights, x, labels, device="cpu"):
    nn = torch.nn
    (w1, b1), (w2, b2), (w3, b3), (w4, b4) = weights
    model = nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(*DENSE[0]), nn.ReLU(), nn.Linear(*DENSE[1]))
    # The same weights: filters to [out, in, kh, kw]; the first dense kernel's rows from (h, w, c) to (c, h, w).
    dense1 = w3.reshape(7, 7, 64, -1).transpose(2, 0, 1, 3).reshape(DENSE[0][0], -1)
    with torch.no_grad():
        for layer, w, b in ((model[0], w1.transpose(3, 2, 0, 1), b1), (model[3], w2.transpose(3, 2, 0, 1), b2),
                            (model[7], dense1.T, b3), (model[9], w4.T, b4)):
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            layer.bias.copy_(torch.from_numpy(b))
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    images = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))).to(device)
    targets = torch.from_numpy(labels.astype(np.int64)).to(device)

    return torch_sgd_step(optimizer, lambda: nn.functional.cross_entropy(model(images), targets))


def _inputs():
    rng = np.random.default_rng(32)
    weights = initial_weights(rng)
    x = rng.standard_normal((BATCH, 28, 28, 1)).astype(np.float32)
    return weights, x, rng.integers(0, 10, BATCH).astype(np.int32)


def tf1_programs(tf):
    step, with_loss = tensorweave_step(*_inputs(), tf=tf)
    return {f"cnn batch {BATCH}": (step, [with_loss() for _ in range(3)])}


def run(options):
    weights, x, labels = _inputs()
    impls = {"tensorweave": tensorweave_step(weights, x, labels), "numpy": numpy_step(weights, x, labels)}
    torch = torch_or_none()
    if torch is not None:
        impls["pytorch"] = torch_step(torch, weights, x, labels)
    check = {name: [with_loss() for _ in range(3)] for name, (_, with_loss) in impls.items()}
    return with_tf1([Case(f"cnn batch {BATCH}", {name: step for name, (step, _) in impls.items()}, check=check)],
                    __name__)


BENCHMARK = Benchmark("cnn", "LeNet-style CNN training step (28x28x1, two 5x5 convs, dense 128, dense 10; SGD)", run)
