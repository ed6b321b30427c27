"""``tf.test``: ``TestCase`` and ``main``, gradient checking (``compute_gradient``, ``compute_gradient_error``)
and what this process's devices are."""

from unittest import mock  # noqa: F401 - TF's tf.test.mock

from tensorweave.runtime.device_mgr import DeviceMgr
from tensorweave.testing import compute_gradient, compute_gradient_error  # noqa: F401
from tensorweave.testing.test_case import TestCase, get_temp_dir, main  # noqa: F401


def is_built_with_cuda():
    """Whether the CUDA kernel package is installed (its device may still be unavailable here)."""
    import importlib.util
    return importlib.util.find_spec("tensorweave_cuda") is not None


is_built_with_gpu_support = is_built_with_cuda


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether a GPU device type is registered and available in this process."""
    return any(d.device_type == "GPU" for d in DeviceMgr().devices)


def gpu_device_name():
    for d in DeviceMgr().devices:
        if d.device_type == "GPU":
            return f"/device:GPU:{d.index}"
    return ""
