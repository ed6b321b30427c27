"""A first graph: build it, then run parts of it with a Session (deferred execution)."""

import numpy as np

import tensorweave as tf

x = tf.placeholder(tf.float32, [None, 3], name="x")
w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
y = tf.add(tf.matmul(x, w), 1.0, name="y")

with tf.Session() as sess:
    print("y =", sess.run(y, {x: [[1.0, 2.0, 3.0]]}))
