"""Every GPU kernel against the CPU kernel on the same inputs, for the dtypes each applies to (needs CUDA; the
table also runs on the numpy stand-in here, so a broken case shows up without a GPU, and a test checks that
the table reaches every op the GPU has a kernel for)."""

import numpy as np
import pytest

import tensorweave as tf

from conftest import STAND_IN, requires_cuda
from op_cases import (CASES, assert_same, case_id, case_params, holder_shape, inputs_for, run_case,
                      run_variable_program, variable_program)
from tensorweave_cuda.plugin import gpu_kernels

PARAMS = case_params()
# Compared with their CPU twins in test_cuda_kernels_gpu.py, and run by the GPU training test.
OPTIMIZER_UPDATES = {f"Resource{sparse}Apply{name}" for sparse in ("", "Sparse")
                     for name in ("GradientDescent", "Momentum", "Adagrad", "RMSProp", "CenteredRMSProp", "Adam",
                                  "Adadelta", "Ftrl", "FtrlV2", "ProximalAdagrad", "ProximalGradientDescent",
                                  "AdagradDA")}


@requires_cuda
@pytest.mark.parametrize("param", PARAMS, ids=[case_id(p) for p in PARAMS])
def test_gpu_kernel_matches_cpu_kernel(param):
    case, dtype = param
    got, want = run_case(case, dtype, "GPU", soft=False)  # no soft placement: a missing GPU kernel fails
    assert_same(got, want, dtype)


@requires_cuda
def test_gpu_variable_updates_match_the_cpu():
    want = run_variable_program("/device:CPU:0", tf.ConfigProto())
    tf.reset_default_graph()
    got = run_variable_program("/device:GPU:0", tf.ConfigProto())
    assert len(got) == len(want) == 20
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_the_case_table_runs_on_the_stand_in(stand_in):
    assert len(PARAMS) > 150
    ran = set()
    for case, dtype in PARAMS:
        got, want = run_case(case, dtype, STAND_IN, soft=True)  # conv has only CUDA kernels: CPU there
        assert_same(got, want, dtype)
        ran |= set(stand_in.devices[0].bound)
    assert {"MatMul", "Softmax", "MaxPool", "MaxPoolGrad", "Sum", "GatherV2", "UniqueWithCounts", "TopKV2",
            "SparseSoftmaxCrossEntropyWithLogits", "LRN", "SegmentSum", "Range", "ScatterNd", "Qr", "Conj",
            "BroadcastGradientArgs", "MaxPoolGradGrad"} <= ran


def test_the_cases_reach_every_op_with_a_gpu_kernel():
    built = set()
    for case in CASES:
        tf.reset_default_graph()
        values = inputs_for(case, case.dtypes[0], np.random.default_rng(0))
        case.fn(*[tf.placeholder(tf.as_dtype(v.dtype), holder_shape(case, v)) for v in values])
        built |= {op.type for op in tf.get_default_graph().get_operations()}
    tf.reset_default_graph()
    variable_program("/device:CPU:0")
    built |= {op.type for op in tf.get_default_graph().get_operations()}
    gpu_ops = {k.op_type for k in gpu_kernels()[0]}
    assert sorted(gpu_ops - built - OPTIMIZER_UPDATES) == []
