"""``cache``: the first complete pass over the input is kept and replayed by later passes.

With filename '' the elements stay in memory, held by the dataset value (so the epochs of a ``repeat`` over
it share them, and a re-initialized iterator computes them again, as TF's in-memory cache). With a filename
they are written to ``<filename>.tw-cache`` (a temporary file renamed once the pass completes): later
passes, sessions and runs of the program read that file instead of the input. The file format is this
package's own (one header per element component, raw bytes; strings length-prefixed), not TF's.
"""

import os
import struct
import threading

import numpy as np

from tensorweave.extension import errors

from tensorweave_cpu.data.base import DatasetValue, ElementIterator, GeneratorIterator

_MAGIC = b"TWCACHE1"
_HEADER = struct.Struct("<HB")  # dtype string length, rank
_DIM = struct.Struct("<q")


class Cache(DatasetValue):
    def __init__(self, input_dataset, filename):
        super().__init__(input_dataset.dtypes)
        self.input = input_dataset
        self.path = f"{filename}.tw-cache" if filename else None
        self._elements = None  # the complete in-memory cache
        self._lock = threading.Lock()

    def iterator(self, pipeline):
        if self.path is None:
            if self._elements is not None:
                return GeneratorIterator(iter(self._elements))
            return _Recording(self.input.iterator(pipeline), self._keep)
        if os.path.exists(self.path):
            return GeneratorIterator(_read(self.path, len(self.dtypes)))
        return _Recording(self.input.iterator(pipeline), self._write)

    def _keep(self, elements):
        with self._lock:
            if self._elements is None:
                self._elements = elements

    def _write(self, elements):
        partial = f"{self.path}.{os.getpid()}.{threading.get_ident()}.partial"
        try:
            with open(partial, "wb") as f:
                f.write(_MAGIC)
                for element in elements:
                    for component in element:
                        _write_array(f, component)
            os.replace(partial, self.path)
        except OSError as e:
            raise errors.ResourceExhaustedError(None, None, f"cannot write the cache file {self.path}: {e}") from None


class _Recording(ElementIterator):
    """Passes the input through, keeping its elements; hands them to ``complete`` after the last one."""

    def __init__(self, source, complete):
        self._source, self._complete = source, complete
        self._elements = []
        self._done = False

    def next(self):
        if self._done:
            return None
        element = self._source.next()
        if element is None:
            self._done = True
            self._complete(self._elements)
            self._elements = None
            return None
        self._elements.append(element)
        return element


def _write_array(f, array):
    kind = array.dtype.str.encode() if array.dtype != object else b"O"
    f.write(_HEADER.pack(len(kind), array.ndim) + kind + b"".join(_DIM.pack(d) for d in array.shape))
    if array.dtype == object:
        for item in array.reshape(-1):
            f.write(_DIM.pack(len(item)) + item)
    else:
        f.write(np.ascontiguousarray(array).tobytes())


def _read(path, num_components):
    with open(path, "rb") as f:
        if f.read(len(_MAGIC)) != _MAGIC:
            raise errors.DataLossError(None, None, f"{path} is not a cache file written by tensorweave; delete it to "
                                                   f"recompute the cache")
        while True:
            head = f.read(_HEADER.size)
            if not head:
                return
            element = [_read_array(f, head)] + [_read_array(f, f.read(_HEADER.size)) for _ in range(num_components - 1)]
            yield tuple(element)


def _read_array(f, head):
    kind_length, rank = _HEADER.unpack(head)
    kind = f.read(kind_length)
    shape = tuple(_DIM.unpack(f.read(_DIM.size))[0] for _ in range(rank))
    count = int(np.prod(shape, dtype=np.int64))
    if kind == b"O":
        out = np.empty(count, dtype=object)
        for i in range(count):
            out[i] = f.read(_DIM.unpack(f.read(_DIM.size))[0])
        return out.reshape(shape)
    dtype = np.dtype(kind.decode())
    return np.frombuffer(f.read(count * dtype.itemsize), dtype=dtype).reshape(shape).copy()
