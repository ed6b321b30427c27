"""Reader resources: turn work units (file names) dequeued from a queue into (key, value) records.

A reader finishes its current file before it dequeues the next name, and its reads run one at a time
in arrival order (concurrent steps may share a reader). Dequeuing is asynchronous, so a read waiting
for the next file holds no thread; a closed, empty queue of names ends reading with OutOfRangeError.
A file that cannot be read (missing, or a damaged record part way) fails the read that reached it, and
the next read goes on with the next file (TF retries the same damaged record for ever).
"""

import collections
import gzip
import threading
import zlib

from tensorweave.extension import Resource, errors, records


class _Read:
    __slots__ = ("limit", "up_to", "records", "cancellation", "done", "token")

    def __init__(self, limit, up_to, cancellation, done):
        self.limit, self.up_to = limit, up_to
        self.records = []
        self.cancellation, self.done = cancellation, done
        self.token = None


_PENDING = object()


class _Handoff:
    """A dequeue's answer meets the serving loop: if it comes before ``dequeue`` returns, the loop takes it
    (no recursion however many files come at once); if later, the callback serves on."""

    __slots__ = ("lock", "result", "returned")

    def __init__(self):
        self.lock = threading.Lock()
        self.result = _PENDING
        self.returned = False


class Reader(Resource):
    """The base reader: subclasses say how a work unit becomes records (``_records``).

    One thread at a time serves the waiting reads (``_serving``): two serving at once could both dequeue a
    work unit for the same read, and the second would replace the first's records unread.
    """

    kind = "Reader"

    def __init__(self, name):
        self.name = name
        self._lock = threading.Lock()
        self._reads = collections.deque()
        self._serving = False
        self._records = iter(())
        self._work = None
        self.produced = 0
        self.completed = 0

    def debug_string(self):
        return f"{self.kind} '{self.name}'"

    def _records_of(self, work):
        """The (key, value) records of one work unit, as bytes."""
        raise TypeError(f"{self.kind} has no record format")

    def reset(self):
        with self._lock:
            self._records, self._work = iter(()), None
            self.produced = self.completed = 0

    def read(self, queue, cancellation, done, limit=1, up_to=False):
        """Takes ``limit`` records (``up_to``: at most, stopping at the end of a work unit) and calls ``done``."""
        request = _Read(limit, up_to, cancellation, done)
        with self._lock:
            self._reads.append(request)
            if len(self._reads) > 1 and cancellation is not None:
                request.token = cancellation.register(lambda err: self._cancel_waiting(request, err))
            serve = not self._serving
            self._serving = True
        if serve:
            self._serve(queue)

    def _cancel_waiting(self, request, error):
        with self._lock:
            if request is self._reads[0] or request not in self._reads:
                return  # the active read fails through its own dequeue
            self._reads.remove(request)
        request.done(error)

    def _serve(self, queue):
        """Serves reads in arrival order until none is left or the one at the head waits for a work unit."""
        while True:
            with self._lock:
                if not self._reads:
                    self._serving = False
                    return
                request = self._reads[0]
                needs_work = self._fill(request)
            if isinstance(needs_work, errors.OpError):
                self._finish(request, needs_work)
            elif not needs_work:
                self._finish(request, request.records)
            else:
                handoff = _Handoff()
                queue.dequeue(request.cancellation, lambda result: self._work_arrived(queue, request, handoff, result))
                with handoff.lock:
                    handoff.returned = True
                    result = handoff.result
                if result is _PENDING:
                    return  # the dequeue's callback serves on
                self._take_work(request, result)

    def _fill(self, request):
        """Adds records from the current work unit; True if the read must wait for another work unit, or the
        error the work unit's records raised (the reader then drops that work unit)."""
        while len(request.records) < request.limit:
            try:
                record = next(self._records, None)
            except errors.OpError as e:
                self._records, self._work = iter(()), None
                return e
            if record is None:
                if self._work is not None:
                    self.completed += 1
                    self._work = None
                return not (request.up_to and request.records)
            request.records.append(record)
            self.produced += 1
        return False

    def _work_arrived(self, queue, request, handoff, result):
        with handoff.lock:
            if not handoff.returned:
                handoff.result = result
                return
        self._take_work(request, result)
        self._serve(queue)

    def _take_work(self, request, result):
        """Starts the dequeued work unit, or ends the read with the dequeue's error."""
        if isinstance(result, BaseException):
            ran_out = request.up_to and request.records and isinstance(result, errors.OutOfRangeError)
            self._finish(request, request.records if ran_out else result)
            return
        work = result[0].decode() if isinstance(result[0], bytes) else str(result[0])
        try:
            records = self._records_of(work)
        except errors.OpError as e:
            self._finish(request, e)
        else:
            with self._lock:
                self._records, self._work = iter(records), work

    def _finish(self, request, result):
        with self._lock:
            if self._reads and self._reads[0] is request:
                self._reads.popleft()
        if request.token is not None:
            request.cancellation.deregister(request.token)
        request.done(result)


def _read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"reader: file {path!r} does not exist") from None
    except IsADirectoryError:
        raise errors.InvalidArgumentError(None, None, f"reader: {path!r} is a directory, not a file") from None


class TextLineReader(Reader):
    kind = "TextLineReader"

    def __init__(self, name, skip_header_lines=0):
        super().__init__(name)
        self.skip_header_lines = skip_header_lines

    def _records_of(self, work):
        lines = records.LineIterator(work)  # a missing file fails here

        def keyed():
            with lines:
                for line in lines:
                    if lines.line_number > self.skip_header_lines:
                        yield f"{work}:{lines.line_number}".encode(), line
        return keyed()


class TFRecordReader(Reader):
    kind = "TFRecordReader"

    def __init__(self, name, compression_type=""):
        super().__init__(name)
        self.compression_type = compression_type

    def _records_of(self, work):
        iterator = records.RecordIterator(work, self.compression_type)  # a missing file fails here

        def keyed():
            with iterator:
                for data in iterator:
                    yield f"{work}:{iterator.record_offset}".encode(), data
        return keyed()


class WholeFileReader(Reader):
    kind = "WholeFileReader"

    def _records_of(self, work):
        return [(work.encode(), _read_bytes(work))]


class IdentityReader(Reader):
    kind = "IdentityReader"

    def _records_of(self, work):
        return [(work.encode(), work.encode())]


class FixedLengthRecordReader(Reader):
    kind = "FixedLengthRecordReader"

    def __init__(self, name, record_bytes, header_bytes=0, footer_bytes=0, hop_bytes=0, encoding=""):
        super().__init__(name)
        if record_bytes <= 0:
            raise errors.InvalidArgumentError(None, None, f"record_bytes must be positive, got {record_bytes}")
        self.record_bytes, self.header_bytes, self.footer_bytes = record_bytes, header_bytes, footer_bytes
        self.hop_bytes = hop_bytes or record_bytes
        self.encoding = encoding

    def _records_of(self, work):
        data = _read_bytes(work)
        if self.encoding == "GZIP":
            data = gzip.decompress(data)
        elif self.encoding == "ZLIB":
            data = zlib.decompress(data)
        body = data[self.header_bytes:len(data) - self.footer_bytes]
        count = 0 if len(body) < self.record_bytes else (len(body) - self.record_bytes) // self.hop_bytes + 1
        return [(f"{work}:{i}".encode(), body[i * self.hop_bytes:i * self.hop_bytes + self.record_bytes])
                for i in range(count)]
