"""``tf.test``: gradient checking (``compute_gradient``, ``compute_gradient_error``)."""

from tensorweave.runtime.device_mgr import DeviceMgr
from tensorweave.testing import compute_gradient, compute_gradient_error  # noqa: F401


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether a GPU device type is registered and available in this process."""
    return any(d.device_type == "GPU" for d in DeviceMgr().devices)


def gpu_device_name():
    for d in DeviceMgr().devices:
        if d.device_type == "GPU":
            return f"/device:GPU:{d.index}"
    return ""
