"""The CUDA optimizer formulas compute what the CPU kernels compute: each formula's C++ body (the same text the
GPU kernel runs, with T and A as double) is compiled for the host with the system's C++ compiler and run over
random elements against the numpy kernels of the CPU package (the sparse kernels run the same body on the rows). This checks the
numbers where no GPU is at hand; test_gpu_vs_cpu.py checks them on a GPU."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from tensorweave_cpu.kernels import training as cpu_training
from tensorweave_cuda.kernels import training

CXX = shutil.which("c++") or shutil.which("g++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler on this machine")


def _host_library(tmp_path, optimizer, ctype):
    """The formula as ``extern "C" void k(n, ins..., options..., outs...)`` looping over n elements."""
    slots, scalars, options = training.parameters(optimizer)
    grad = "delta" if optimizer == "GradientDescent" else "grad"
    in_params, out_params, body = training.dense_params(slots, scalars + [grad], options,
                                                        training.FORMULAS[optimizer])
    args, decls = ["long long n"], []
    for name in [p.split()[-1] for p in in_params.split(",")]:
        if name in options:
            args.append(f"int {name}")
        else:
            args.append(f"const T* {name}_in")
            decls.append(f"const T {name} = {name}_in[i];")
    for name in [p.split()[-1] for p in out_params.split(",")]:
        args.append(f"T* {name}_out")
        decls.append(f"T& {name} = {name}_out[i];")
    source = (f"#include <cmath>\nusing namespace std;\nstruct float16 {{}};\n{training.PREAMBLE}\ntypedef {ctype} T;\n"
              f'extern "C" void k({", ".join(args)}) {{\nfor (long long i = 0; i < n; ++i) {{\n'
              + "\n".join(decls) + "\n" + body + "\n}}\n")
    src, lib = tmp_path / f"{optimizer}.cc", tmp_path / f"{optimizer}_{ctype}.so"
    src.write_text(source)
    subprocess.run([CXX, "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, capture_output=True)
    return ctypes.CDLL(str(lib)), slots, scalars, options


SCALARS = {"lr": 0.3, "alpha": 0.2, "momentum": 0.9, "rho": 0.85, "epsilon": 1e-6, "beta1": 0.9, "beta2": 0.99,
           "beta1_power": 0.81, "beta2_power": 0.9801, "l1": 0.05, "l2": 0.1, "l2_shrinkage": 0.07, "lr_power": -0.5,
           "global_step": 3.0}
CASES = [(name, {}) for name in sorted(training.FORMULAS)] + [
    ("Ftrl", {"lr_power": -0.3}), ("Ftrl", {"l1": 0.0}), ("FtrlV2", {"lr_power": -0.7}),
    ("ProximalAdagrad", {"l1": 0.0}), ("ProximalGradientDescent", {"l1": 0.0, "l2": 0.0}), ("AdagradDA", {"l1": 0.0}),
    ("Momentum", {"use_nesterov": 1}), ("Adagrad", {"update_slots": 0})]


@pytest.mark.parametrize("optimizer,changed", CASES, ids=[f"{o}-{c}" if c else o for o, c in CASES])
def test_formula_matches_the_cpu_kernel(tmp_path, optimizer, changed):
    library, slots, scalars, options = _host_library(tmp_path, optimizer, "double")
    rng = np.random.RandomState(7)
    n = 64
    arrays = {s: (rng.normal(0, 1, n) if s in ("var", "m", "linear", "mom", "gradient_accumulator")
                  else rng.uniform(-0.2, 0.2, n) if s == "mg" else rng.uniform(0.1, 2.0, n)) for s in slots}
    grad = rng.normal(0, 1, n)
    values = {name: float(changed.get(name, SCALARS[name])) for name in scalars}
    flags = {o: int(changed.get(o, 0)) for o in options}

    expected = {s: a.copy() for s, a in arrays.items()}
    names = training.UPDATES[optimizer][0]
    cpu_inputs = [expected[n] if n in expected else grad if n in ("grad", "delta") else np.float64(values[n])
                  for n in names]
    cpu_training.DENSE[optimizer](*cpu_inputs, **{o: bool(v) for o, v in flags.items()})

    got = {s: np.ascontiguousarray(a.copy()) for s, a in arrays.items()}
    pointer = ctypes.POINTER(ctypes.c_double)
    scalar_arrays = [np.full(n, values[name]) for name in scalars]
    call = [ctypes.c_longlong(n)] + [a.ctypes.data_as(pointer) for a in scalar_arrays + [grad]]
    call += [ctypes.c_int(flags[o]) for o in options] + [got[s].ctypes.data_as(pointer) for s in slots]
    library.k(*call)
    for s in slots:
        assert np.isfinite(expected[s]).all(), (optimizer, s)
        np.testing.assert_allclose(got[s], expected[s], rtol=1e-12, atol=1e-12, err_msg=f"{optimizer}: {s}")
