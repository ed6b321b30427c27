"""The machine and software a benchmark run measured: CPU, cores, BLAS and its environment, versions."""

import os
import platform
import subprocess

OPENBLAS_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _blas():
    import numpy as np
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # older numpy: no dicts mode
        return "unknown"


def _openblas_core():
    """The CPU kernel set numpy's OpenBLAS picked at load (OPENBLAS_CORETYPE overrides it), when it says."""
    import ctypes
    import glob

    import numpy as np
    libs = glob.glob(os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs", "*openblas*"))
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_",
                     "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None


def _git_commit():
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def load_tensorweave_first():
    """Loads the native kernels before PyTorch and returns their status line.

    Both link an OpenMP runtime named libgomp.so.1 (PyTorch bundles its own copy), and the process keeps
    the first one loaded: loading ours first gives both the passive wait policy the native kernels ask
    for, instead of PyTorch's spinning threads starving numpy's BLAS threads on a 2-core machine.
    """
    try:
        from tensorweave_cpu.kernels import native
    except ImportError as e:
        return f"tensorweave-kernels-cpu not importable: {e}"
    return native.STATUS


def describe():
    import numpy as np

    from benchmarks.common import torch_or_none
    native_status = load_tensorweave_first()
    torch = torch_or_none()
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": _blas(),
        "blas_core": _openblas_core(),
        "openblas_env": {k: os.environ.get(k) for k in OPENBLAS_VARIABLES},
        "thread_env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOMP_SPINCOUNT")
                       if k in os.environ},
        "pytorch": f"{torch.__version__} ({torch.get_num_threads()} threads)" if torch else None,
        "tensorweave_native": native_status,
        "commit": _git_commit(),
    }
