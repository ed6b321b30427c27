"""Every GPU kernel family against the CPU kernel on the same inputs, for the dtypes each applies to (needs CUDA;
the table also runs on the numpy stand-in here, so a broken case shows up without a GPU)."""

import pytest

from conftest import STAND_IN, requires_cuda
from op_cases import assert_same, case_id, case_params, run_case

PARAMS = case_params()


@requires_cuda
@pytest.mark.parametrize("param", PARAMS, ids=[case_id(p) for p in PARAMS])
def test_gpu_kernel_matches_cpu_kernel(param):
    case, dtype = param
    got, want = run_case(case, dtype, "GPU", soft=False)  # no soft placement: a missing GPU kernel fails
    assert_same(got, want, dtype)


def test_the_case_table_runs_on_the_stand_in(stand_in):
    assert len(PARAMS) > 150
    ran = set()
    for case, dtype in PARAMS:
        got, want = run_case(case, dtype, STAND_IN, soft=True)  # conv has only CUDA kernels: CPU there
        assert_same(got, want, dtype)
        ran |= set(stand_in.devices[0].bound)
    assert {"MatMul", "Softmax", "MaxPool", "MaxPoolGrad", "Sum", "GatherV2", "UniqueWithCounts", "TopKV2",
            "SparseSoftmaxCrossEntropyWithLogits", "LRN", "SegmentSum", "Range", "ScatterNd"} <= ran
