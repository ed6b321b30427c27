"""The iterator resource: lives in the session's containers (as queues do) and keeps its position across runs.

Initializing starts a new pipeline on a dataset value and closes the previous one (stopping its threads);
closing the resource (its container cleared, its session closed) closes the pipeline. ``get_next`` calls
are served one at a time; after the end every call raises OutOfRangeError until the iterator is
initialized again. A string handle names the resource (device, container, name) for
``IteratorFromStringHandleV2``.
"""

import json
import threading

import numpy as np

from tensorweave.extension import Resource, errors

from tensorweave_cpu.data.base import shape_text
from tensorweave_cpu.data.pipeline import Pipeline

_UNINITIALIZED = ("GetNext() failed because the iterator has not been initialized. Ensure that you have run the "
                  "initializer operation for this iterator before getting the next element.")


def _bytes(strings):
    """A string array with any str items encoded (the core keeps str constants as given; TF hands out bytes)."""
    if not any(isinstance(s, str) for s in strings.reshape(-1)):
        return strings
    out = np.empty(strings.shape, dtype=object)
    for i, s in enumerate(strings.reshape(-1)):
        out.flat[i] = s.encode() if isinstance(s, str) else s
    return out


def _compatible(shape, declared):
    return shape == declared or (len(shape) == len(declared) and all(
        d is None or d == s for s, d in zip(shape, declared)))


class IteratorResource(Resource):
    def __init__(self, name, dtypes, shapes):
        self.name = name
        self.dtypes = list(dtypes)  # numpy dtypes (None for variant components)
        self.shapes = list(shapes)  # tuples with None for unknown dims, or None for unknown rank
        self._state_lock = threading.Lock()
        self._next_lock = threading.Lock()
        self._iterator = self._pipeline = None
        self._ended = False
        self._started_once = False
        self.closed = False
        self._checks = [(i, d, s) for i, (d, s) in enumerate(zip(self.dtypes, self.shapes))
                        if d is not None and (d is np.object_ or s is not None)]

    def debug_string(self):
        return f"Iterator {self.name}"

    @property
    def initialized(self):
        return self._pipeline is not None

    def check_structure(self, dataset, what):
        if [str(d) for d in dataset.dtypes] != [str(d) for d in self.dtypes]:
            raise errors.InvalidArgumentError(None, None, (
                f"{what}: the dataset's component types {[str(d) for d in dataset.dtypes]} do not match the "
                f"iterator's {[str(d) for d in self.dtypes]}"))

    def initialize(self, dataset):
        """Starts iterating ``dataset`` from its beginning, dropping (and stopping) the previous pipeline."""
        self.check_structure(dataset, f"initializing iterator {self.name!r}")
        pipeline = Pipeline(self.name)
        iterator = dataset.iterator(pipeline)
        with self._state_lock:
            old, self._pipeline, self._iterator, self._ended = self._pipeline, pipeline, iterator, False
        if old is not None:
            old.close()

    def initialize_once(self, make_dataset):
        """A one-shot iterator's start: the first call initializes it on ``make_dataset()``; later calls keep
        its position (and make nothing)."""
        with self._next_lock:
            if self._started_once:
                return
            self.initialize(make_dataset())
            self._started_once = True

    def get_next(self, cancellation):
        with self._next_lock:
            with self._state_lock:
                pipeline, iterator, ended = self._pipeline, self._iterator, self._ended
            if pipeline is None:
                raise errors.FailedPreconditionError(None, None, _UNINITIALIZED)
            if not ended:
                element = pipeline.serve(iterator, cancellation)
                if element is not None:
                    return self._finished(element)
                with self._state_lock:
                    if self._iterator is iterator:
                        self._ended = True
            raise errors.OutOfRangeError(None, None, "End of sequence")

    def _finished(self, element):
        """The element's components checked against the iterator's shapes, strings as bytes (as TF's)."""
        out = list(element)
        for i, dtype, declared in self._checks:
            value = out[i]
            if declared is not None and not _compatible(value.shape, declared):
                raise errors.InvalidArgumentError(None, None, (
                    f"component {i} of the element has shape {shape_text(value.shape)}, but iterator {self.name!r} "
                    f"hands out elements of shape {shape_text(declared)}"))
            if dtype is np.object_:
                out[i] = _bytes(value)
        return out

    def close(self, error=None):
        with self._state_lock:
            pipeline, self._pipeline, self._iterator = self._pipeline, None, None
            self.closed = True
        if pipeline is not None:
            pipeline.close()



def string_handle(device, container, name):
    return json.dumps({"iterator": name, "container": container, "device": device}).encode()


def parse_string_handle(text):
    """(device, container, name) from a string handle, or InvalidArgumentError saying what was wrong."""
    try:
        fields = json.loads(text.decode() if isinstance(text, bytes) else text)
        return fields["device"], fields["container"], fields["iterator"]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise errors.InvalidArgumentError(None, None, (
            f"{text!r} is not an iterator's string handle; feed the value of iterator.string_handle() (a "
            f"session.run of it) to the placeholder given to Iterator.from_string_handle")) from None
