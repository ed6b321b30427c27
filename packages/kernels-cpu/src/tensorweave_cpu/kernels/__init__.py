"""Numpy kernels, one module per op family.

A module's ``ARRAY_NAMESPACE_GENERIC`` names the ops whose kernels there call only the device's array module
(``xp``/``node.device.array_module``) and ndarray methods both numpy and cupy have, so tensorweave-kernels-cuda
registers those very kernels for the GPU; anything numpy-only (native code, ``np.errstate``, numpy functions on
tensors, the ``writeable`` flag) stays out of it.
"""
