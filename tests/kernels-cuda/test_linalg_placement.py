"""Ops without a GPU kernel (the decompositions, solves, special functions and segment reductions of issue 18)
are placed on the CPU beside a GPU, and ops whose kernels are array-module generic (Qr, Atan2, Rint, the
diagonals) on the GPU; checked on the numpy stand-in for a GPU (``conftest.StandInGPU``), values equal to the
CPU's."""

import numpy as np

import tensorweave as tf

from conftest import STAND_IN


def _config(stand_in_devices):
    return tf.ConfigProto(device_count={STAND_IN: stand_in_devices, "GPU": 0}, allow_soft_placement=True)


def _program():
    a = tf.placeholder(tf.float64, [3, 3], name="a")
    ids = tf.constant([0, 0, 2])
    out = {
        "inverse": tf.matrix_inverse(a + 3.0 * np.eye(3)), "svd": tf.svd(a, compute_uv=False),
        "lgamma": tf.lgamma(a * a + 1.0), "segment_max": tf.segment_max(a, ids), "diag": tf.matrix_diag_part(a),
        "einsum": tf.einsum("ij,jk->ik", a, a), "qr": tf.qr(a)[1], "atan2": tf.atan2(a, a + 2.0),
        "rint": tf.rint(a * 3.0),
    }
    out["grad"] = tf.gradients(tf.reduce_sum(out["inverse"]) + tf.reduce_sum(out["segment_max"]), a)[0]
    return out, {a: np.arange(9.0).reshape(3, 3) / 7.0}


def test_ops_without_a_gpu_kernel_run_on_the_cpu_beside_a_gpu(stand_in):
    with tf.Graph().as_default():
        fetches, feed = _program()
        with tf.Session(config=_config(0)) as s:
            want = s.run(fetches, feed)
    with tf.Graph().as_default():
        fetches, feed = _program()
        with tf.Session(config=_config(1)) as s:
            meta = tf.RunMetadata()
            got = s.run(fetches, feed, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    where = {n.name: n.device for g in meta.partition_graphs for n in g.node}
    for name in ("MatrixInverse", "Svd", "Lgamma", "SegmentMax"):
        assert where[name].endswith("CPU:0"), (name, where[name])
    for name in ("Qr", "Atan2", "Rint", "diag_part", "einsum/MatMul"):
        assert where[name].endswith(f"{STAND_IN}:0"), (name, where[name])
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12, err_msg=key)
