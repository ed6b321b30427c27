"""tensorweave-kernels-cuda: GPU devices and kernels on CuPy, for the core's ops.

``probe()`` says whether CUDA can be used here and, if not, why; the plugin (``tensorweave_cuda.plugin``)
registers one GPU device per visible CUDA device when it can.
"""

from tensorweave_cuda.availability import probe

__version__ = "0.1.0"
__all__ = ["probe"]
