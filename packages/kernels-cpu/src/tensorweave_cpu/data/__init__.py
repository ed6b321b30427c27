"""The iterators behind tf.data's ops: dataset values (what a dataset op outputs), their element iterators,
and the iterator resource. Kernels in ``tensorweave_cpu.kernels.datasets`` build them from op inputs."""
