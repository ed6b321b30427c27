"""A multilayer perceptron on scikit-learn's 8x8 handwritten digits, written as a TF1 program.

    python examples/digits_mlp.py [--epochs N] [--logdir runs/digits_mlp]
    tensorweave-board --logdir runs/digits_mlp     # its summaries (with tensorweave[board] installed)

64 pixels -> 256 ReLU units (dropout while training) -> 10 logits, trained with Adam on 1,437 images and
tested on the 360 held out.
"""

import sys

import digits_training

import tensorweave as tf


def network(images, training):
    hidden = tf.layers.dense(tf.layers.flatten(images), 256, activation=tf.nn.relu, name="hidden")
    hidden = tf.layers.dropout(hidden, rate=0.25, training=training)
    return tf.layers.dense(hidden, 10, name="logits")


def build_model(learning_rate, seed):
    return digits_training.build_classifier(network, learning_rate, seed)


def main(argv=None):
    args = digits_training.parse_args("digits_mlp", __doc__.splitlines()[0], epochs=40, batch_size=32,
                                      learning_rate=0.002, argv=argv)
    return digits_training.train(build_model(args.learning_rate, args.seed), args)


if __name__ == "__main__":
    main(sys.argv[1:])
