"""A TF 1.x program with tf.device scopes, soft placement, log_device_placement and a traced step
runs with only its import lines changed, on two CPU devices."""

import json

import numpy as np
import pytest

pytestmark = pytest.mark.cpu_only

PROGRAM = '''
import numpy as np
import tensorflow as tf
from tensorflow.python.client import timeline

# Linear regression with the parameters on one device and the model on another, as TF1 tutorials
# did with "/cpu:0" and "/gpu:0"; a summary op asks for a GPU that is not there.
rng = np.random.RandomState(1)
true_w = np.array([[2.0], [-3.0], [0.5]], np.float32)
data_x = rng.randn(128, 3).astype(np.float32)
data_y = data_x.dot(true_w) + 0.7

with tf.device("/cpu:0"):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    b = tf.Variable(0.0, name="b")
    global_step = tf.Variable(0, trainable=False, name="global_step")

with tf.device("/cpu:1"):
    prediction = tf.add(tf.matmul(x, w), b, name="prediction")
    loss = tf.reduce_mean(tf.square(prediction - y), name="loss")

with tf.device("/cpu:0"):
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)

with tf.device("/gpu:0"):
    weight_size = tf.reduce_mean(tf.abs(w), name="weight_size")

config = tf.ConfigProto(device_count={"CPU": 2}, log_device_placement=True, allow_soft_placement=True)
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    first_loss = sess.run(loss, feed_dict={x: data_x, y: data_y})
    for step in range(150):
        _, last_loss = sess.run([train_op, loss], feed_dict={x: data_x, y: data_y})
    final_w, final_b, steps, size = sess.run([w, b, global_step, weight_size])

    run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    run_metadata = tf.RunMetadata()
    sess.run(train_op, feed_dict={x: data_x, y: data_y}, options=run_options, run_metadata=run_metadata)
    trace = timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format()
    devices = sorted(d.device for d in run_metadata.step_stats.dev_stats)
'''

IMPORTS = [("import tensorflow as tf", "import tensorweave as tf"),
           ("from tensorflow.python.client import timeline", "from tensorweave.client import timeline")]
CPU = "/job:localhost/replica:0/task:0/device:CPU:"


def test_program_runs_with_only_its_imports_changed(capfd):
    source = PROGRAM
    for old, new in IMPORTS:
        source = source.replace(old, new)
    changed = [(a, b) for a, b in zip(PROGRAM.splitlines(), source.splitlines()) if a != b]
    assert changed == IMPORTS
    import tensorweave as tf
    tf.reset_default_graph()
    scope = {}
    exec(compile(source, "tf1_device_program.py", "exec"), scope)  # noqa: S102 - the program under test
    assert scope["last_loss"] < 1e-3 * scope["first_loss"]
    np.testing.assert_allclose(scope["final_w"], scope["true_w"], atol=0.05)
    assert abs(scope["final_b"] - 0.7) < 0.05 and scope["steps"] == 150
    assert scope["size"] == np.float32(np.abs(scope["final_w"]).mean())
    assert scope["devices"] == [CPU + "0", CPU + "1"]
    events = json.loads(scope["trace"])["traceEvents"]
    assert any(e["ph"] == "s" for e in events) and any(e["ph"] == "X" and e["name"] == "MatMul" for e in events)
    log = capfd.readouterr().err.splitlines()
    assert f"loss: (Mean): {CPU}1" in log and f"prediction: (Add): {CPU}1" in log
    assert f"w: (VarHandleOp): {CPU}0" in log
    assert f"weight_size: (Mean): {CPU}0" in log  # /gpu:0 does not exist: soft placement
