"""Hand-written CUDA kernels for the ops where a fused or missing GPU op pays: each module's ``KERNELS`` is a
``KernelSet("GPU", priority=10)``, above the namespace-generic kernels reused from the CPU package."""

CUDA_KERNEL_MODULES = (
    "tensorweave_cuda.kernels.losses",
    "tensorweave_cuda.kernels.scatter",
    "tensorweave_cuda.kernels.pooling",
    "tensorweave_cuda.kernels.conv",
    "tensorweave_cuda.kernels.training",
)
