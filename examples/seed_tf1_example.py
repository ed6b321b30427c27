"""The TF1 program from the TensorFlow presentation (../shared/seeds/tf-and-pytorch-presentation.txt), Phase 1
and Phase 2, as written on the slides; only the import line changes. The slides leave the data as ``...``;
here it is scikit-learn's digits, each 8x8 image scaled up to 24x24 and padded to MNIST's 28x28 = 784
pixels, with one-hot labels. One line (marked) records the loss so the run can show that it falls.

    python examples/seed_tf1_example.py [--steps N]
"""

import argparse

import numpy as np
from sklearn.datasets import load_digits

import tensorweave as tf

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=300)
parser.add_argument("--batch-size", type=int, default=100)
ARGS, _ = parser.parse_known_args()
BATCH_SIZE = ARGS.batch_size
NUM_STEPS = ARGS.steps


def digits_as_mnist():
    """784-pixel images in [0, 1] (8x8 digits upsampled 3x and padded by 2) and one-hot float32 labels."""
    digits = load_digits()
    images = np.kron(digits.images / 16.0, np.ones((3, 3)))
    images = np.pad(images, ((0, 0), (2, 2), (2, 2))).reshape(-1, 784).astype(np.float32)
    return images, np.eye(10, dtype=np.float32)[digits.target]


def batches(images, labels, rng=np.random.default_rng(0)):
    """Endless shuffled batches of exactly BATCH_SIZE examples."""
    while True:
        order = rng.permutation(len(images))
        for start in range(0, len(order) - BATCH_SIZE + 1, BATCH_SIZE):
            chosen = order[start:start + BATCH_SIZE]
            yield images[chosen], labels[chosen]


data = batches(*digits_as_mnist())
losses = []

# ---- Phase 1: Define an ML model as a dataflow graph (as on the slide) ----
# 1. Construct a graph representing the model.
x = tf.placeholder(tf.float32, [BATCH_SIZE, 784]) # Placeholder for input.
y = tf.placeholder(tf.float32, [BATCH_SIZE, 10])  # Placeholder for labels.

W_1 = tf.Variable(tf.random_uniform([784, 100])) # 784x100 weight matrix.
b_1 = tf.Variable(tf.zeros([100]))               # 100-element bias vector.
layer_1 = tf.nn.relu(tf.matmul(x, W_1) + b_1)     # Output of hidden layer.

W_2 = tf.Variable(tf.random_uniform([100, 10]))  # 100x10 weight matrix.
b_2 = tf.Variable(tf.zeros([10]))                # 10-element bias vector.
layer_2 = tf.matmul(layer_1, W_2) + b_2          # Output of linear layer.

# 2. Add nodes that represent the optimization algorithm.
loss = tf.nn.softmax_cross_entropy_with_logits(layer_2, y)
train_op = tf.train.AdagradOptimizer(0.01).minimize(loss)

# ---- Phase 2: Execute an optimized version of the graph (as on the slide) ----
# 3. Execute the graph on batches of input data.
with tf.Session() as sess: # Connect to the TF runtime.
    sess.run(tf.initialize_all_variables()) # Randomly initialize weights.
    for step in range(NUM_STEPS): # Train iteratively for NUM_STEPS.
        x_data, y_data = next(data) # Load one batch of input data.
        sess.run(train_op, {x: x_data, y: y_data}) # Perform one training step.
        losses.append(float(np.mean(sess.run(loss, {x: x_data, y: y_data}))))  # (added) record the loss

if __name__ == "__main__":
    tenth = max(1, NUM_STEPS // 10)
    print(f"mean loss over the first {tenth} steps: {np.mean(losses[:tenth]):.2f}, "
          f"over the last {tenth}: {np.mean(losses[-tenth:]):.2f}")
