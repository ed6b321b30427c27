"""A TF1 training program written the way tutorials write it with tf.data: a reinitializable iterator switched
between a shuffled, batched training set and a validation set, trained until OutOfRangeError each epoch."""

import numpy as np

import tensorweave as tf


def test_train_and_validate_with_one_reinitializable_iterator():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 2)).astype(np.float32)
    y = (x[:, 0] + 2 * x[:, 1] > 0).astype(np.int64)
    train = tf.data.Dataset.from_tensor_slices((x[:160], y[:160])).shuffle(160, seed=1).batch(32)
    valid = tf.data.Dataset.from_tensor_slices((x[160:], y[160:])).batch(40)
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    features, labels = it.get_next()
    logits = tf.layers.dense(features, 2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.int32))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    init_train, init_valid = it.make_initializer(train), it.make_initializer(valid)
    accuracies, steps = [], 0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(init_train)
            while True:
                try:
                    sess.run(step)
                    steps += 1
                except tf.errors.OutOfRangeError:
                    break
            sess.run(init_valid)
            accuracies.append(sess.run(correct) / 40)
    assert steps == 3 * 5 and accuracies[-1] >= 0.9 and accuracies[-1] >= accuracies[0]
