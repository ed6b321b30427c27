"""Every hand-written CUDA source compiles with NVRTC for every dtype it serves, on the oldest architecture this
NVRTC supports and a new one (compare-and-swap atomics before sm_70/sm_60, native ones after). NVRTC needs no
GPU, only its library (``pip install nvidia-cuda-nvrtc-cu12`` beside cupy-cuda12x); without it these tests skip
and say so. CUDA 13 compiles for sm_75 and newer only: the compare-and-swap paths are checked with CUDA 12's."""

import re

import pytest

from tensorweave_cuda.kernels import compile as cc
from tensorweave_cuda.kernels import conv, losses, pooling, scatter, training


def _nvrtc_reason():
    try:
        from cupy.cuda import nvrtc
        nvrtc.getVersion()
    except Exception as e:  # ImportError, or the library missing: cupy raises its own error types
        return f"NVRTC is not usable here ({type(e).__name__}: {e}); pip install nvidia-cuda-nvrtc-cu12"
    return None


def _supported_archs():
    """The compute capabilities this NVRTC compiles for (its own list), empty without NVRTC."""
    try:
        from cupy.cuda import nvrtc
        return tuple(sorted(nvrtc.getSupportedArchs()))
    except Exception:
        return ()


REASON = _nvrtc_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")
SUPPORTED = _supported_archs()
ARCHS = (f"compute_{SUPPORTED[0] if SUPPORTED else 60}", "compute_80")


def _needs_arch(capability):
    """Skips unless this NVRTC compiles for ``capability`` (CUDA 13 dropped everything before sm_75)."""
    if SUPPORTED and capability not in SUPPORTED:
        pytest.skip(f"this NVRTC compiles for sm_{SUPPORTED[0]} to sm_{SUPPORTED[-1]}, not sm_{capability}: the "
                    f"path for older GPUs is checked where CUDA 12's NVRTC is installed")

RAW = [(losses.SOURCE, ["softmax_xent", "sparse_softmax_xent"], cc.FLOATS, ("int32", "int64")),
       (scatter.body(), ["scatter_add"], cc.FLOATS + ("int32", "int64"), ("int32", "int64")),
       (scatter.body(accumulate_in_float32=True), ["scatter_add"], ("float16",), ("int32", "int64")),
       (pooling.SOURCE, ["max_pool", "avg_pool", "max_pool_grad", "avg_pool_grad"], cc.FLOATS, ("int64",)),
       (conv.SOURCE, ["im2col", "col2im"], cc.FLOATS, ("int64",))]


def _entry_points(code):
    return set(re.findall(r"\.visible \.entry (\w+)\(", code))


@pytest.mark.parametrize("source,names,dtypes,index_dtypes", RAW, ids=["losses", "scatter", "scatter_f16_wide",
                                                                      "pooling", "conv"])
@pytest.mark.parametrize("arch", ARCHS)
def test_raw_kernels_compile_for_every_dtype(source, names, dtypes, index_dtypes, arch):
    for dtype in dtypes:
        for index_dtype in index_dtypes:
            code = cc.ptx(source, dtype, index_dtype, arch)
            assert _entry_points(code) == set(names), (dtype, index_dtype)


def test_float16_and_float64_atomics_are_native_on_new_gpus():
    new = cc.ptx(scatter.body(), "float16", "int64", "compute_80")
    assert "atom.global.add.noftz.f16" in new and "atom.cas" not in new
    assert "atom.global.add.f64" in cc.ptx(scatter.body(), "float64", "int64", "compute_80")


def test_float16_atomics_compare_and_swap_before_sm70():
    _needs_arch(60)
    old = cc.ptx(scatter.body(), "float16", "int64", "compute_60")
    assert re.search(r"atom(\.global)?\.cas\.b32", old) and "noftz.f16" not in old
    assert "atom.global.add.f64" in cc.ptx(scatter.body(), "float64", "int64", "compute_60")


def test_float64_atomics_compare_and_swap_before_pascal():
    _needs_arch(52)
    before_pascal = cc.ptx(scatter.body(), "float64", "int64", "compute_52")
    assert "atom.global.add.f64" not in before_pascal and re.search(r"atom(\.global)?\.cas\.b64", before_pascal)


def test_a_broken_source_fails_with_nvrtc_log_naming_the_dtype():
    with pytest.raises(RuntimeError, match=r"NVRTC could not compile the kernel for float32 \(compute_80\)"):
        cc.ptx('extern "C" __global__ void k(scalar_t* x) { undefined_name(x); }', "float32")


# ---- the optimizer formulas: CuPy wraps them in its own ElementwiseKernel; here each operation is compiled in a
# harness that declares its parameters as CuPy would (a reference per element, scalars by value) ----------------
def _harness(in_params, out_params, operation, ctype):
    decls, args = [], ["long long n"]
    for spec in [p.strip() for p in in_params.split(",")]:
        parts = spec.split()
        raw, (kind, name) = parts[0] == "raw", parts[-2:]
        c = {"T": ctype, "I": "long long", "int32": "int", "int64": "long long"}[kind]
        if raw:
            args.append(f"const {c}* {name}")
        elif kind == "T":
            args.append(f"const {c}* {name}_in")
            decls.append(f"const {c} {name} = {name}_in[i];")
        else:
            args.append(f"{c} {name}")
    for spec in [p.strip() for p in out_params.split(",")]:
        parts = spec.split()
        if parts[0] == "raw":
            args.append(f"{ctype}* {parts[-1]}")
        else:
            args.append(f"{ctype}* {parts[-1]}_out")
            decls.append(f"{ctype}& {parts[-1]} = {parts[-1]}_out[i];")
    return ("struct tw_half_stand_in {};\n" + training.PREAMBLE.replace("float16", "tw_half_stand_in")
            + f"typedef {ctype} T;\n"
            + f'extern "C" __global__ void k({", ".join(args)}) {{\n'
            + "for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {\n"
            + "\n".join(decls) + "\n" + operation + "\n}}\n")


def _kernels():
    found = []
    for optimizer in training.FORMULAS:  # updates without a formula have CPU kernels only
        for sparse in (False, True):
            found.append(training._dense_kernel(optimizer, sparse))
    found.append(("Adam_moment_rows", training.sparse_params(["m", "v"], ["beta1", "beta2", "grad"], (),
                                                             training.ADAM_ROWS)))
    found.append(("Adam_step", training.dense_params(["var"], ["m", "v", "beta1_power", "beta2_power", "lr",
                                                              "epsilon"], (), training.ADAM_STEP)))
    return found


@pytest.mark.parametrize("name,params", _kernels(), ids=[k[0] for k in _kernels()])
def test_optimizer_formulas_compile_for_float_and_double(name, params):
    for ctype in ("float", "double"):
        code = cc.ptx(_harness(*params, ctype), "float32")  # the prelude is unused by the harness
        assert _entry_points(code) == {"k"}, (name, ctype)
