"""The digits classifier trained from TFRecord files through tf.data, written as a TF1 user writes it:
tf.app.run, tf.flags, tf.logging, tf.train.Example records and a reinitializable iterator.

    python examples/digits_tfrecords.py [--epochs N] [--batch_size B] [--data_dir DIR] [--logdir DIR]
    tensorweave-board --logdir runs/digits_tfrecords     # its summaries (with tensorweave[board] installed)

The first run writes scikit-learn's 8x8 digits as GZIP-compressed TFRecord files of tf.train.Example
protos (train.tfrecord.gz, test.tfrecord.gz in --data_dir, files real TensorFlow reads too); every run then
reads them back with tf.data.TFRecordDataset, parses them with tf.parse_single_example in a parallel map,
shuffles, batches and prefetches, and trains a small MLP one epoch per pass over the train file.
"""

import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import tensorweave as tf

flags = tf.app.flags
flags.DEFINE_string("data_dir", "runs/digits_tfrecords/data", "Where the TFRecord files are written and read.")
flags.DEFINE_string("logdir", "runs/digits_tfrecords", "Where summaries and the checkpoint go.")
flags.DEFINE_integer("epochs", 15, "Passes over the training file.")
flags.DEFINE_integer("batch_size", 32, "Examples per training step.")
flags.DEFINE_float("learning_rate", 0.002, "Adam's learning rate.")
flags.DEFINE_integer("seed", 0, "Seed of the split, the initial weights and the shuffle.")
FLAGS = flags.FLAGS

COMPRESSION = "GZIP"
FEATURES = {"image": tf.FixedLenFeature([64], tf.float32), "label": tf.FixedLenFeature([], tf.int64)}


def write_records(path, images, labels):
    """One tf.train.Example per image: 64 floats and an int64 label."""
    options = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)
    with tf.python_io.TFRecordWriter(path, options=options) as writer:
        for image, label in zip(images, labels):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(float_list=tf.train.FloatList(value=image.ravel())),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            }))
            writer.write(example.SerializeToString())


def make_records():
    """The train and test files, written once; later runs read what is there."""
    paths = {split: os.path.join(FLAGS.data_dir, f"{split}.tfrecord.gz") for split in ("train", "test")}
    if all(tf.gfile.Exists(path) for path in paths.values()):
        tf.logging.info("reading the records in %s", FLAGS.data_dir)
        return paths
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    train_x, test_x, train_y, test_y = train_test_split(images, digits.target, test_size=0.2,
                                                        random_state=FLAGS.seed, stratify=digits.target)
    tf.gfile.MakeDirs(FLAGS.data_dir)
    write_records(paths["train"], train_x, train_y)
    write_records(paths["test"], test_x, test_y)
    tf.logging.info("wrote %d training and %d test examples to %s", len(train_y), len(test_y), FLAGS.data_dir)
    return paths


def parse(record):
    features = tf.parse_single_example(record, FEATURES)
    return tf.reshape(features["image"], [8, 8, 1]), features["label"]


def dataset(path, training):
    records = tf.data.TFRecordDataset(path, compression_type=COMPRESSION)
    if training:
        records = records.shuffle(buffer_size=2048, seed=FLAGS.seed)
    return records.map(parse, num_parallel_calls=2).batch(FLAGS.batch_size).prefetch(2)


def network(images):
    hidden = tf.layers.dense(tf.layers.flatten(images), 256, activation=tf.nn.relu, name="hidden")
    return tf.layers.dense(hidden, 10, name="logits")


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    paths = make_records()
    tf.set_random_seed(FLAGS.seed)
    train_data, test_data = dataset(paths["train"], True), dataset(paths["test"], False)
    iterator = tf.data.Iterator.from_structure(train_data.output_types, train_data.output_shapes)
    images, labels = iterator.get_next()
    logits = network(images)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.int32))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(loss, global_step=global_step)
    train_init, test_init = iterator.make_initializer(train_data), iterator.make_initializer(test_data)
    writer = tf.summary.FileWriter(FLAGS.logdir, tf.get_default_graph())
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(1, FLAGS.epochs + 1):
            sess.run(train_init)
            losses = []
            while True:
                try:
                    _, value = sess.run([train_op, loss])
                except tf.errors.OutOfRangeError:
                    break
                losses.append(value)
            step = sess.run(global_step)
            sess.run(test_init)
            right = total = 0
            while True:
                try:
                    batch_right, batch_labels = sess.run([correct, labels])
                except tf.errors.OutOfRangeError:
                    break
                right, total = right + batch_right, total + len(batch_labels)
            accuracy = right / total
            writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="train/loss", simple_value=np.mean(losses)),
                                                 tf.Summary.Value(tag="test/accuracy", simple_value=accuracy)]),
                               step)
            tf.logging.info("epoch %d (step %d): train loss %.4f, test accuracy %.4f", epoch, step,
                            np.mean(losses), accuracy)
        writer.close()
        saver.save(sess, os.path.join(FLAGS.logdir, "model.ckpt"), global_step=global_step)
    print(f"final test accuracy {accuracy:.4f}; summaries in {FLAGS.logdir}: "
          f"tensorweave-board --logdir {FLAGS.logdir}")


if __name__ == "__main__":
    tf.app.run()
