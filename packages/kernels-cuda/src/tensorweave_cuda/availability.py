"""Whether CUDA can be used in this process, and if not, the reason the plugin listing shows.

``cupy.cuda.is_available()`` is the probe: it returns False without raising where CuPy is installed but no
driver or device is (``runtime.getDeviceCount()`` raises there instead of returning 0).
"""

import importlib


class CudaStatus:
    """What ``probe`` found: the cupy module (or None), the number of visible CUDA devices, and why none."""

    __slots__ = ("cupy", "device_count", "reason")

    def __init__(self, cupy=None, device_count=0, reason=""):
        self.cupy = cupy
        self.device_count = device_count
        self.reason = reason

    @property
    def available(self):
        return self.cupy is not None and self.device_count > 0

    def __repr__(self):
        return f"<CudaStatus devices={self.device_count} reason={self.reason!r}>"


INSTALL_HINT = "pip install 'tensorweave-kernels-cuda[cuda13]' (or [cuda12], matching your CUDA driver)"


def probe(import_module=importlib.import_module):
    """Imports CuPy and counts CUDA devices; never raises (a failure becomes the reason)."""
    try:
        cupy = import_module("cupy")
    except ImportError as e:
        return CudaStatus(reason=f"no CuPy installed ({e}); install it with {INSTALL_HINT}")
    except Exception as e:  # a broken CuPy install fails with other errors at import
        return CudaStatus(reason=f"CuPy failed to import: {type(e).__name__}: {e}")
    try:
        if not cupy.cuda.is_available():
            return CudaStatus(cupy, 0, f"CuPy {cupy.__version__} is installed but no CUDA device is usable: "
                                       f"{_driver_error(cupy)}")
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return CudaStatus(cupy, 0, f"CuPy {cupy.__version__} could not query CUDA devices: {type(e).__name__}: {e}")
    if count <= 0:
        return CudaStatus(cupy, 0, f"CuPy {cupy.__version__} sees no CUDA device (CUDA_VISIBLE_DEVICES hides them?)")
    return CudaStatus(cupy, count, "")


def _driver_error(cupy):
    """The driver's own words for why there is no device (is_available() only says False)."""
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return "is_available() is False (no device, or the driver is too old for this CuPy build)"
