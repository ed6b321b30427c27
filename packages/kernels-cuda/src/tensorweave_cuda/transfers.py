"""Host<->device copies for cross-device edges (the core's Recv calls ``to_host``/``from_host`` of the devices).

Copies run on a copy stream of their own through pinned host buffers, so the host does not wait for the compute
stream's kernels. Events order them: a device-to-host copy waits (on the GPU) for the compute work queued before
it and the host waits only for the copy; a host-to-device copy waits (on the GPU) for the compute work queued
before it, since CuPy's pool may hand it memory that queued work still reads or writes, and the compute stream
waits for the copy. A pinned staging buffer is kept until its copy's event has completed.
"""

import collections
import threading

import numpy as np


def is_device_value(value, cupy):
    return isinstance(value, cupy.ndarray)


def is_host_array(value):
    """Host values that have a device form: numeric numpy arrays and scalars (strings and handles stay on host)."""
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biufc"


class HostTransfers:
    """The copy engine of one GPU: a copy stream, pinned staging buffers and the events that order them."""

    def __init__(self, cupy, cuda_device, compute_stream, empty_pinned=None):
        if empty_pinned is None:
            import cupyx
            empty_pinned = cupyx.empty_pinned
        self._cupy = cupy
        self._empty_pinned = empty_pinned
        self._device = cuda_device
        self._compute = compute_stream
        with cuda_device:
            self.stream = cupy.cuda.Stream(non_blocking=True)
        self._in_flight = collections.deque()  # (event, pinned buffer) of host-to-device copies not known done
        self._lock = threading.Lock()
        self.bytes_to_device = 0
        self.bytes_to_host = 0

    def to_device(self, value):
        """A device array of ``value``, queued on the copy stream; the compute stream waits for it."""
        if not is_host_array(value):
            return value
        host = np.asarray(value)  # copyto below gathers a strided array; 0-d values stay 0-d
        with self._device, self._compute:  # the pool ties the new array's memory to the compute stream
            pinned = self._empty_pinned(host.shape, host.dtype)
            np.copyto(pinned, host)
            out = self._cupy.empty(host.shape, host.dtype)
            # The pool orders reuse on the compute stream only: ``out`` may be memory that work still queued
            # there uses, so the copy starts after that work.
            self.stream.wait_event(self._compute.record())
            out.set(pinned, stream=self.stream)
            copied = self.stream.record()
            self._compute.wait_event(copied)
        with self._lock:
            self.bytes_to_device += host.nbytes
            self._in_flight.append((copied, pinned))
            while self._in_flight and self._in_flight[0][0].done:
                self._in_flight.popleft()
        return out

    def to_host(self, value):
        """A numpy array of the device array ``value``, copied after the compute work queued before it."""
        if not is_device_value(value, self._cupy):
            return value
        with self._device:
            with self._compute:  # a strided view is gathered first, in order with the work that made it
                if not value.flags.c_contiguous:
                    value = value.copy()
                produced = self._compute.record()
            self.stream.wait_event(produced)
            pinned = self._empty_pinned(value.shape, value.dtype)
            value.get(stream=self.stream, out=pinned, blocking=False)
            self.stream.record().synchronize()
        with self._lock:
            self.bytes_to_host += value.nbytes
        return pinned  # the pinned pool takes the buffer back when the array is collected

    def synchronize(self):
        with self._device:
            self.stream.synchronize()
        with self._lock:
            self._in_flight.clear()
