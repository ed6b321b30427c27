"""The digits examples train on the GPU (needs CUDA): a short run of each learns, with the model's ops and
variables placed on GPU:0 and only feeds and fetches crossing to the host."""

import numpy as np
import pytest

import tensorweave as tf

from conftest import requires_cuda

pytestmark = requires_cuda


@pytest.mark.parametrize("name,steps,minimum", [("mlp", 200, 0.85), ("cnn", 150, 0.8)])
def test_a_short_run_learns_the_digits_on_the_gpu(name, steps, minimum, digits_examples, tmp_path):
    accuracy = digits_examples[name].main(["--steps", str(steps), "--logdir", str(tmp_path / name), "--quiet"])
    assert accuracy >= minimum  # chance is 0.1


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_the_model_is_placed_on_the_gpu(name, digits_examples, capfd):
    model = digits_examples[name].build_model(0.002, seed=0)
    images = np.random.default_rng(0).random((8, 8, 8, 1), np.float32)
    feed = {model["images"]: images, model["labels"]: np.arange(8) % 10, model["training"]: True}
    capfd.readouterr()
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as s:
        s.run(tf.global_variables_initializer())
        losses = [s.run([model["train_op"], model["loss"]], feed)[1] for _ in range(5)]
    where = {}
    for line in capfd.readouterr().err.splitlines():
        if ": (" in line and "/device:" in line and ": (_Recv): " not in line:
            op, rest = line.split(": (", 1)
            where[op] = (rest.split(")", 1)[0], rest.rsplit("/device:", 1)[1])
    on_gpu = {op_type for op_type, device in where.values() if device == "GPU:0"}
    assert {"MatMul", "VarHandleOp", "ReadVariableOp", "ResourceApplyAdam", "SparseSoftmaxCrossEntropyWithLogits",
            "BiasAdd", "Relu"} <= on_gpu
    if name == "cnn":
        assert {"Conv2D", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad"} <= on_gpu
    on_cpu = {op_type for op_type, device in where.values() if device != "GPU:0"}
    assert on_cpu <= {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}, on_cpu
    assert losses[-1] < losses[0]
