"""A tf.estimator.Estimator trained data-parallel as Horovod's Estimator examples do: DistributedOptimizer in the
model_fn, BroadcastGlobalVariablesHook(0) as a training hook, model_dir on rank 0 only (None elsewhere, so
only rank 0 writes checkpoints), each rank reading its own shard.

Arguments: model_dir steps. Each rank prints its final weights, its model_dir and what is in it."""

import json
import os
import sys

import numpy as np
import tensorweave_distributed as twd
from mpi_common import start

import tensorweave as tf

model_dir_arg, steps = sys.argv[1], int(sys.argv[2])
rank, size = start()
X = np.linspace(-1, 1, 16 * 3, dtype=np.float32).reshape(16, 3)
Y = X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25


def model_fn(features, labels, mode):
    # each rank starts from different weights: the broadcast must make them rank 0's
    w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.1 * (rank + 1)))
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    pred = tf.matmul(features["x"], w) + b
    loss = tf.losses.mean_squared_error(labels, pred)
    optimizer = twd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.2))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


shard = slice(rank * 16 // size, (rank + 1) * 16 // size)
input_fn = tf.estimator.inputs.numpy_input_fn({"x": X[shard]}, Y[shard], batch_size=4, num_epochs=None,
                                              shuffle=False)
config = tf.estimator.RunConfig(save_checkpoints_steps=5, log_step_count_steps=5)
estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir_arg if rank == 0 else None, config=config)
estimator.train(input_fn, steps=steps, hooks=[twd.BroadcastGlobalVariablesHook(0)])
report = {"rank": rank, "model_dir": estimator.model_dir, "files": sorted(os.listdir(estimator.model_dir))}
if rank == 0:  # only rank 0 has checkpoints to read
    report["w"] = estimator.get_variable_value("w").ravel().tolist()
    report["b"] = estimator.get_variable_value("b").ravel().tolist()
    report["global_step"] = int(estimator.get_variable_value("global_step"))
print("REPORT " + json.dumps(report), flush=True)
