"""The host<->device copy engine's ordering, on a recording stand-in for CuPy's streams, events and arrays (the
pinned buffers are plain numpy here): which stream copies, which event each side waits for, what is kept alive."""

import contextlib
import types

import numpy as np

from tensorweave_cuda.transfers import HostTransfers, is_host_array


class _Event:
    def __init__(self, log, stream):
        self.log, self.name, self.done = log, f"event@{stream}", False

    def synchronize(self):
        self.log.append(("host waits", self.name))
        self.done = True


class _Stream:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def __enter__(self):
        self.log.append(("current", self.name))
        return self

    def __exit__(self, *exc):
        return False

    def record(self):
        self.log.append(("record", self.name))
        return _Event(self.log, self.name)

    def wait_event(self, event):
        self.log.append(("stream waits", self.name, event.name))

    def synchronize(self):
        self.log.append(("synchronize", self.name))


class _DeviceArray:
    """A 'device' array: numpy data that only set/get move across, each logged with its stream."""

    def __init__(self, log, data):
        self.log, self.data = log, data

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    nbytes = property(lambda self: self.data.nbytes)
    flags = property(lambda self: types.SimpleNamespace(c_contiguous=self.data.flags.c_contiguous))

    def copy(self):
        self.log.append(("device copy",))
        return _DeviceArray(self.log, self.data.copy())

    def set(self, host, stream):
        self.log.append(("host to device", stream.name))
        np.copyto(self.data, host)

    def get(self, stream, out, blocking):
        assert not blocking and out.flags.c_contiguous
        self.log.append(("device to host", stream.name))
        np.copyto(out, self.data)


def _engine():
    log = []
    streams = iter(["copy"])
    cupy = types.SimpleNamespace(
        ndarray=_DeviceArray, empty=lambda shape, dtype: _DeviceArray(log, np.empty(shape, dtype)),
        cuda=types.SimpleNamespace(Stream=lambda non_blocking: _Stream(log, next(streams))))
    compute = _Stream(log, "compute")
    engine = HostTransfers(cupy, contextlib.nullcontext(), compute, empty_pinned=np.empty)
    return engine, log


def test_host_to_device_is_queued_on_the_copy_stream_after_the_compute_work_and_the_compute_stream_waits_for_it():
    engine, log = _engine()
    value = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]  # strided: gathered into the pinned buffer
    out = engine.to_device(value)
    assert isinstance(out, _DeviceArray) and out.data.tolist() == value.tolist()
    # The copy waits for the compute work queued before it: the pool may have handed it memory that work uses
    # (found on a GPU: fed labels overwritten by a float tensor's bytes); the host never waits.
    assert log == [("current", "compute"), ("record", "compute"), ("stream waits", "copy", "event@compute"),
                   ("host to device", "copy"), ("record", "copy"), ("stream waits", "compute", "event@copy")]
    assert engine.bytes_to_device == value.nbytes and len(engine._in_flight) == 1


def test_a_staging_buffer_is_kept_until_its_copy_event_completes():
    engine, _ = _engine()
    engine.to_device(np.ones(3))
    first_event, first_buffer = engine._in_flight[0]
    engine.to_device(np.zeros(2))
    assert len(engine._in_flight) == 2  # the first copy is not known done: its buffer stays referenced
    first_event.done = True
    engine.to_device(np.zeros(1))
    assert [buffer.shape for _, buffer in engine._in_flight] == [(2,), (1,)]
    engine.synchronize()
    assert not engine._in_flight


def test_device_to_host_waits_on_the_gpu_for_the_producer_and_on_the_host_only_for_the_copy():
    engine, log = _engine()
    value = _DeviceArray(log, np.arange(6, dtype=np.int64).reshape(2, 3))
    host = engine.to_host(value)
    assert isinstance(host, np.ndarray) and host.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert log == [("current", "compute"), ("record", "compute"), ("stream waits", "copy", "event@compute"),
                   ("device to host", "copy"), ("record", "copy"), ("host waits", "event@copy")]
    assert engine.bytes_to_host == 48


def test_a_strided_device_view_is_gathered_on_the_compute_stream_first():
    engine, log = _engine()
    view = _DeviceArray(log, np.arange(8.0).reshape(2, 4)[:, 1::2])
    assert engine.to_host(view).tolist() == [[1.0, 3.0], [5.0, 7.0]]
    assert log[:3] == [("current", "compute"), ("device copy",), ("record", "compute")]


def test_scalars_keep_their_shape_and_host_only_values_pass_through():
    engine, _ = _engine()
    scalar = engine.to_device(np.float32(2.5))
    assert scalar.shape == () and scalar.data.item() == 2.5
    words = np.array([b"a", b"bc"], dtype=object)
    handle = object()
    assert engine.to_device(words) is words and engine.to_device(handle) is handle
    assert engine.to_host(words) is words and engine.to_host(np.float64(1.0)) == 1.0
    assert is_host_array(np.bool_(True)) and not is_host_array(words) and not is_host_array([1, 2])
