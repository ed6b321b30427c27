"""A small convolutional network on scikit-learn's 8x8 handwritten digits, written as a TF1 program.

    python examples/digits_cnn.py [--epochs N] [--logdir runs/digits_cnn]
    tensorweave-board --logdir runs/digits_cnn     # its summaries (with tensorweave[board] installed)

Two 3x3 convolutions (32 and 64 filters, SAME padding, ReLU), 2x2 max pooling, a 128-unit dense layer
with dropout and 10 logits; trained with Adam on 1,437 images shifted by up to one pixel, tested on the
360 held out.
"""

import sys

import digits_training

import tensorweave as tf


def network(images, training):
    net = tf.layers.conv2d(images, 32, 3, padding="same", activation=tf.nn.relu, name="conv1")
    net = tf.layers.conv2d(net, 64, 3, padding="same", activation=tf.nn.relu, name="conv2")
    net = tf.layers.max_pooling2d(net, 2, 2, name="pool")
    net = tf.layers.dense(tf.layers.flatten(net), 128, activation=tf.nn.relu, name="dense")
    net = tf.layers.dropout(net, rate=0.4, training=training)
    return tf.layers.dense(net, 10, name="logits")


def build_model(learning_rate, seed):
    return digits_training.build_classifier(network, learning_rate, seed)


def main(argv=None):
    args = digits_training.parse_args("digits_cnn", __doc__.splitlines()[0], epochs=25, batch_size=32,
                                      learning_rate=0.002, argv=argv)
    return digits_training.train(build_model(args.learning_rate, args.seed), args, augment=digits_training.shifted)


if __name__ == "__main__":
    main(sys.argv[1:])
