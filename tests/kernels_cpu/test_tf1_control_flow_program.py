"""A TF 1.x program with tf.cond, tf.while_loop and tf.gradients runs with only its import line changed."""

import numpy as np

PROGRAM = '''
import numpy as np
import tensorflow as tf

# A recurrent map whose number of steps is fed at run time, a data-dependent branch, and training
# through both with tf.gradients and a hand-written gradient-descent update.
x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
y = tf.placeholder(tf.float32, shape=[None], name="y")
steps = tf.placeholder(tf.int32, shape=[], name="steps")
w = tf.Variable(np.eye(3, dtype=np.float32) * 0.5, name="w")
v = tf.Variable(np.zeros([3], np.float32), name="v")

def cond(i, h):
    return tf.less(i, steps)

def body(i, h):
    return i + 1, tf.tanh(tf.matmul(h, w) + x)

_, h = tf.while_loop(cond, body, [tf.constant(0), tf.zeros_like(x)])
score = tf.reduce_sum(h * v, axis=1)
big = tf.reduce_mean(tf.abs(score)) > 1.0
prediction = tf.cond(big, lambda: score / tf.reduce_mean(tf.abs(score)), lambda: score)
loss = tf.reduce_mean(tf.square(prediction - y))
grad_w, grad_v = tf.gradients(loss, [w, v])
learning_rate = 0.3
train_op = tf.group(tf.assign_sub(w, learning_rate * grad_w), tf.assign_sub(v, learning_rate * grad_v))

rng = np.random.RandomState(0)
data_x = rng.uniform(-1, 1, size=(64, 3)).astype(np.float32)
data_y = np.tanh(data_x.sum(axis=1)).astype(np.float32)
feed = {x: data_x, y: data_y, steps: 3}

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    initial_loss = sess.run(loss, feed_dict=feed)
    for _ in range(150):
        sess.run(train_op, feed_dict=feed)
    final_loss = sess.run(loss, feed_dict=feed)
    gradient_norm = np.linalg.norm(sess.run(grad_v, feed_dict=feed))
    one_step_loss = sess.run(loss, feed_dict={x: data_x, y: data_y, steps: 1})
'''


def test_program_runs_with_only_its_import_changed():
    source = PROGRAM.replace("import tensorflow as tf", "import tensorweave as tf")
    changed = [(a, b) for a, b in zip(PROGRAM.splitlines(), source.splitlines()) if a != b]
    assert changed == [("import tensorflow as tf", "import tensorweave as tf")]
    import tensorweave as tf
    tf.reset_default_graph()
    scope = {}
    exec(compile(source, "tf1_control_flow_program.py", "exec"), scope)  # noqa: S102 - the program under test
    assert scope["final_loss"] < 0.25 * scope["initial_loss"]
    assert scope["gradient_norm"] < 0.1
    assert np.isfinite(scope["one_step_loss"]) and scope["one_step_loss"] != scope["final_loss"]
