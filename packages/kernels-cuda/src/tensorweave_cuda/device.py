"""The GPU device: CuPy arrays on one CUDA device, memory from CuPy's pool, kernels queued on one stream.

Every GPU kernel runs through ``bind``, which makes this device and its stream current for the kernel's thread
(CuPy keeps both per thread) and turns CuPy's out-of-memory error into ``ResourceExhaustedError`` naming the op,
the sizes it ran on and the pool's state. ``ConfigProto(gpu_options=GPUOptions(visible_device_list="0,2",
per_process_gpu_memory_fraction=0.5))`` picks the devices and caps each one's pool.
"""

from tensorweave.extension import Device, errors

from tensorweave_cuda.transfers import HostTransfers


class GPUDevice(Device):
    is_host = False
    flops_per_second = 1e13  # cost-model seeds until measured: a mid-range GPU's FP32 rate and memory speed
    bytes_per_second = 5e11

    def __init__(self, name, index, cupy, cuda_index, memory_fraction=None):
        self.cupy = cupy
        self.array_module = cupy
        self.cuda_index = cuda_index
        self.cuda_device = cupy.cuda.Device(cuda_index)
        props = cupy.cuda.runtime.getDeviceProperties(cuda_index)
        model = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        self.total_memory = int(props["totalGlobalMem"])
        super().__init__(name, "GPU", index, description=(
            f"{model}, {self.total_memory / 2**30:.1f} GiB, compute capability {props['major']}.{props['minor']} "
            f"(CUDA device {cuda_index})"))
        self.memory_pool = cupy.get_default_memory_pool()
        with self.cuda_device:
            self.stream = cupy.cuda.Stream(non_blocking=True)
            if memory_fraction is not None and 0 < memory_fraction < 1:
                self.memory_pool.set_limit(fraction=memory_fraction)
        self.transfers = HostTransfers(cupy, self.cuda_device, self.stream)

    def bind(self, compute, node):
        """``compute`` run with this device and stream current, out-of-memory named for ``node``."""
        device, stream, oom = self.cuda_device, self.stream, self.cupy.cuda.memory.OutOfMemoryError

        def run(*args):
            try:
                with device, stream:
                    return compute(*args)
            except oom as e:
                raise self.out_of_memory(node, args, e) from e

        return run

    def out_of_memory(self, node, args, error):
        with self.cuda_device:
            used, held = self.memory_pool.used_bytes(), self.memory_pool.total_bytes()
            limit = self.memory_pool.get_limit()
        inputs = ", ".join(f"{a.dtype}{list(a.shape)} ({a.nbytes:,} bytes)" for a in args if hasattr(a, "nbytes"))
        return errors.ResourceExhaustedError(None, getattr(node, "source", None), (
            f"out of GPU memory on {self.name} running op {node.name!r} ({node.op_type}) on inputs "
            f"[{inputs or 'none'}]: {error} The pool has {used:,} bytes in use and holds {held:,} of the device's "
            f"{self.total_memory:,}" + (f" (limit {limit:,})" if limit else "") + ". Use a smaller batch, free "
            f"tensors you keep fetched, or raise GPUOptions(per_process_gpu_memory_fraction=)."))

    def from_host(self, value):
        return self.transfers.to_device(value)

    def to_host(self, value):
        return self.transfers.to_host(value)

    def collective_backend(self):
        """NCCL for collectives on this device's tensors (tensorweave_distributed asks; None without NCCL)."""
        from tensorweave_cuda.nccl import backend_for
        return backend_for(self)

    def synchronize(self):
        with self.cuda_device:
            self.stream.synchronize()
        self.transfers.synchronize()

    def close(self):
        super().close()
        self.synchronize()


def visible_devices(gpu_options, device_count):
    """CUDA device indices this process uses: ``visible_device_list`` ("0,2") if set, else all of them."""
    listed = getattr(gpu_options, "visible_device_list", "") if gpu_options is not None else ""
    if not listed:
        return list(range(device_count))
    try:
        chosen = [int(i) for i in str(listed).split(",") if i.strip()]
    except ValueError:
        raise ValueError(f"GPUOptions.visible_device_list must be comma-separated CUDA device indices such as "
                         f"'0,1', got {listed!r}") from None
    bad = [i for i in chosen if not 0 <= i < device_count]
    if bad or len(set(chosen)) != len(chosen):
        raise ValueError(f"GPUOptions.visible_device_list={listed!r} names CUDA devices {bad or chosen} but this "
                         f"machine has {device_count} (indices 0..{device_count - 1}), each at most once")
    return chosen


def gpu_device_factory(cupy, device_count):
    """The device factory the plugin registers: ``count`` GPUs among the visible ones, in index order."""
    def factory(count, context):
        options = getattr(context.config, "gpu_options", None)
        indices = visible_devices(options, device_count)[:count]
        fraction = getattr(options, "per_process_gpu_memory_fraction", None)
        return [GPUDevice(context.device_name("GPU", i), i, cupy, cuda_index, fraction)
                for i, cuda_index in enumerate(indices)]
    return factory
