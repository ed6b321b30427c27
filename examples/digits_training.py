"""What the digits examples share: scikit-learn's bundled 8x8 digits (no download), the command line, the
classifier around each example's network (inputs, loss, Adam), and a TF1-style training loop with a progress
bar, held-out evaluation and a checkpoint in the log directory.

With tensorweave-tensorboard-lite installed (``tensorweave[board]``) the loop also writes summaries for the
dashboard: loss and accuracy (``train/`` every few steps, ``test/`` each epoch), weight histograms, a few input
images, the hyperparameters, the graph and one traced step's timeline. Without it, it trains the same."""

import argparse
import csv
import os
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import tensorweave as tf


def load_data(seed=0, test_fraction=0.2):
    """(train_images, test_images, train_labels, test_labels): 8x8x1 images scaled to [0, 1], int64 labels."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    return train_test_split(images, digits.target.astype(np.int64), test_size=test_fraction, random_state=seed,
                            stratify=digits.target)


def parse_args(name, description, epochs, batch_size, learning_rate, argv=None):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--epochs", type=int, default=epochs, help=f"passes over the training set ({epochs})")
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps (default: no limit)")
    parser.add_argument("--batch-size", type=int, default=batch_size)
    parser.add_argument("--learning-rate", type=float, default=learning_rate)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logdir", default=os.path.join("runs", name),
                        help="where the checkpoint and per-epoch metrics go (default %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--summary-every", type=int, default=10,
                        help="steps between training summaries (with tensorweave[board] installed; default 10)")
    return parser.parse_args(argv)


def accuracy_of(logits, labels):
    return tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32), name="accuracy")


def build_classifier(network, learning_rate, seed):
    """The model dict ``train`` expects: ``network(images, training)`` gives the logits, Adam minimizes their
    softmax cross-entropy."""
    tf.set_random_seed(seed)
    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    training = tf.placeholder_with_default(False, [], name="training")
    logits = network(images, training)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    return {"images": images, "labels": labels, "training": training, "loss": loss,
            "accuracy": accuracy_of(logits, labels), "train_op": train_op, "global_step": global_step}


def shifted(images, rng, max_shift=1):
    """Each image moved by up to ``max_shift`` pixels in each direction (zeros fill in): cheap augmentation."""
    out = np.zeros_like(images)
    size = images.shape[1]
    for i, (dy, dx) in enumerate(rng.integers(-max_shift, max_shift + 1, size=(len(images), 2))):
        src = images[i, max(0, -dy):size - max(0, dy), max(0, -dx):size - max(0, dx)]
        out[i, max(0, dy):max(0, dy) + src.shape[0], max(0, dx):max(0, dx) + src.shape[1]] = src
    return out


def summary_api():
    """``tf.summary`` when tensorweave-tensorboard-lite is installed, else None."""
    try:
        return tf.summary if tf.summary.FileWriter else None
    except ImportError:
        return None


class SummaryLogger:
    """Writes what the dashboard shows into ``logdir/train`` and ``logdir/test``: two runs whose ``metrics/loss``
    and ``metrics/accuracy`` charts overlay."""

    def __init__(self, model, args):
        self.summary = summary_api()
        self.every = args.summary_every
        if self.summary is None or self.every <= 0:
            self.summary = None
            return
        s = self.summary
        with tf.name_scope("metrics"):
            scalars = [s.scalar("loss", model["loss"]), s.scalar("accuracy", model["accuracy"])]
        weights = [s.histogram(f"weights/{v.op.name}", v) for v in tf.trainable_variables()]
        self.train_op = s.merge(scalars + weights + [s.image("inputs", model["images"], max_outputs=3)])
        self.test_op = s.merge(scalars)
        settings = "\n".join(f"| {k} | {v} |" for k, v in sorted(vars(args).items()))
        self.text_op = s.text("hyperparameters", tf.constant(f"| setting | value |\n|---|---|\n{settings}"))
        self.train_dir, self.test_dir = os.path.join(args.logdir, "train"), os.path.join(args.logdir, "test")

    def start(self, sess):
        if self.summary is not None:
            self.train = self.summary.FileWriter(self.train_dir, sess.graph)
            self.test = self.summary.FileWriter(self.test_dir)
            self.train.add_summary(sess.run(self.text_op), 0)

    def wants(self, step):
        return self.summary is not None and step % self.every == 0

    def train_step(self, sess, fetches, feed, step, trace=False):
        """Runs ``fetches`` with the training summaries (and a full trace of the step when ``trace``)."""
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if trace else None
        metadata = tf.RunMetadata() if trace else None
        *values, summary = sess.run(list(fetches) + [self.train_op], feed, options=options, run_metadata=metadata)
        self.train.add_summary(summary, step)
        if trace:
            self.train.add_run_metadata(metadata, f"step{step}", step)
        return values

    def held_out(self, sess, feed, step):
        if self.summary is not None:
            self.test.add_summary(sess.run(self.test_op, feed), step)

    def close(self, logdir):
        if self.summary is not None:
            self.train.close()
            self.test.close()
            print(f"summaries in {logdir}: see them with  tensorweave-board --logdir {logdir}")


def train(model, args, augment=None):
    """Trains ``model`` (a dict of images, labels, training, loss, accuracy, train_op, global_step) and returns
    the final held-out accuracy; prints it and writes the checkpoint and metrics to ``args.logdir``."""
    x_train, x_test, y_train, y_test = load_data(args.seed)
    rng = np.random.default_rng(args.seed)
    steps_per_epoch = int(np.ceil(len(x_train) / args.batch_size))
    total = args.epochs * steps_per_epoch if args.steps is None else min(args.steps, args.epochs * steps_per_epoch)
    os.makedirs(args.logdir, exist_ok=True)
    saver = tf.train.Saver()
    fetches = [model["train_op"], model["loss"], model["accuracy"]]
    evaluate = {"loss": model["loss"], "accuracy": model["accuracy"]}
    rows = []
    logger = SummaryLogger(model, args)
    start = time.perf_counter()
    with tf.Session() as sess, tqdm(total=total, desc=os.path.basename(args.logdir), unit="step",
                                    disable=args.quiet) as bar:
        sess.run(tf.global_variables_initializer())
        logger.start(sess)
        step = sess.make_callable(fetches, [model["images"], model["labels"], model["training"]])
        smoothed, done = None, 0
        for epoch in range(args.epochs):
            order = rng.permutation(len(x_train))
            for i in range(steps_per_epoch):
                if done >= total:
                    break
                batch = order[i * args.batch_size:(i + 1) * args.batch_size]
                images = x_train[batch] if augment is None else augment(x_train[batch], rng)
                if logger.wants(done):
                    feed = {model["images"]: images, model["labels"]: y_train[batch], model["training"]: True}
                    _, loss, accuracy = logger.train_step(sess, fetches, feed, done, trace=done == logger.every)
                else:
                    _, loss, accuracy = step(images, y_train[batch], True)
                smoothed = np.array([loss, accuracy]) if smoothed is None else 0.9 * smoothed + 0.1 * np.array(
                    [loss, accuracy])
                bar.set_postfix(loss=f"{smoothed[0]:.3f}", acc=f"{smoothed[1]:.3f}", refresh=False)
                bar.update()
                done += 1
            held_out = sess.run(evaluate, {model["images"]: x_test, model["labels"]: y_test})
            logger.held_out(sess, {model["images"]: x_test, model["labels"]: y_test}, done)
            rows.append({"epoch": epoch + 1, "step": done, "train_loss": float(smoothed[0]),
                         "test_loss": float(held_out["loss"]), "test_accuracy": float(held_out["accuracy"])})
            bar.set_postfix(loss=f"{smoothed[0]:.3f}", acc=f"{smoothed[1]:.3f}",
                            test_acc=f"{held_out['accuracy']:.4f}")
            if done >= total:
                break
        saver.save(sess, os.path.join(args.logdir, "model.ckpt"), global_step=model["global_step"])
    logger.close(args.logdir)
    seconds = time.perf_counter() - start
    with open(os.path.join(args.logdir, "metrics.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    accuracy = rows[-1]["test_accuracy"]
    print(f"final held-out accuracy: {accuracy:.4f} ({len(y_test)} test images, {done} steps, {seconds:.1f} s)")
    return accuracy
