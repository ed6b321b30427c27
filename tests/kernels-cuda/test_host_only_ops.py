"""Ops with no GPU kernel -- PyFunc (the function needs the GIL and host arrays) and the sparse ops -- are placed
on the CPU beside a GPU (the numpy stand-in, ``conftest.StandInGPU``): by default, and under a GPU
``tf.device`` with soft placement; without soft placement such a request fails as in TF1, naming the op and the
device that has its kernel."""

import numpy as np
import pytest

import tensorweave as tf

from conftest import STAND_IN

ON_STAND_IN = f"/device:{STAND_IN}:0"


def _config(soft=True):
    return tf.ConfigProto(device_count={STAND_IN: 1, "GPU": 0}, allow_soft_placement=soft, log_device_placement=True)


def _placements(stderr):
    out = {}
    for line in stderr.splitlines():
        if ": (" in line and "/device:" in line and ": (_Recv): " not in line:
            name, rest = line.split(": (", 1)
            out[name] = rest.split("/device:")[-1]
    return out


def _program():
    x = tf.placeholder(tf.float32, [2, 2])
    doubled = tf.matmul(x, x, name="square_matrix")
    via_python = tf.py_func(lambda v: v * 2, [doubled], tf.float32, name="twice")
    sp = tf.SparseTensor([[0, 1], [1, 0]], tf.reshape(via_python, [-1])[:2], [2, 2])
    product = tf.sparse_tensor_dense_matmul(sp, x, name="sparse_product")
    return x, tf.matmul(product, x, name="after")


@pytest.mark.parametrize("scoped", [False, True])
def test_py_func_and_sparse_ops_run_on_the_cpu_beside_a_gpu(stand_in, capfd, scoped):
    if scoped:
        with tf.device(ON_STAND_IN):
            x, out = _program()
    else:
        x, out = _program()
    value = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    with tf.Session(config=_config()) as s:
        got = s.run(out, {x: value})
    where = _placements(capfd.readouterr().err)
    assert where["twice"] == "CPU:0" and where["sparse_product"] == "CPU:0"
    assert where["square_matrix"] == f"{STAND_IN}:0" and where["after"] == f"{STAND_IN}:0"
    twice = (value @ value * 2).reshape(-1)[:2]
    sparse = np.array([[0.0, twice[0]], [twice[1], 0.0]], np.float32)
    np.testing.assert_allclose(got, sparse @ value @ value, rtol=1e-6)


def test_a_gpu_request_for_a_py_func_without_soft_placement_names_the_op(stand_in):
    with tf.device(ON_STAND_IN):
        y = tf.py_func(lambda v: v, [tf.constant([1.0])], tf.float32, name="host_only")
    with tf.Session(config=_config(soft=False)) as s, pytest.raises(tf.errors.InvalidArgumentError) as info:
        s.run(y)
    assert "host_only" in info.value.message and "CPU:0" in info.value.message
