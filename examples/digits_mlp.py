"""A multilayer perceptron on scikit-learn's 8x8 handwritten digits, written as a TF1 program.

    python examples/digits_mlp.py [--epochs N] [--logdir runs/digits_mlp]
    tensorweave-board --logdir runs/digits_mlp     # its summaries (with tensorweave[board] installed)

64 pixels -> 256 ReLU units (dropout while training) -> 10 logits, trained with Adam on 1,437 images and
tested on the 360 held out.
"""

import sys

import digits_training

import tensorweave as tf


def build_model(learning_rate, seed):
    tf.set_random_seed(seed)
    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    training = tf.placeholder_with_default(False, [], name="training")
    hidden = tf.layers.dense(tf.layers.flatten(images), 256, activation=tf.nn.relu, name="hidden")
    hidden = tf.layers.dropout(hidden, rate=0.25, training=training)
    logits = tf.layers.dense(hidden, 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    return {"images": images, "labels": labels, "training": training, "loss": loss,
            "accuracy": digits_training.accuracy_of(logits, labels), "train_op": train_op,
            "global_step": global_step}


def main(argv=None):
    args = digits_training.parse_args("digits_mlp", __doc__.splitlines()[0], epochs=40, batch_size=32,
                                      learning_rate=0.002, argv=argv)
    return digits_training.train(build_model(args.learning_rate, args.seed), args)


if __name__ == "__main__":
    main(sys.argv[1:])
