"""Everything the dashboard knows about one run: every scalar point (no sampling), histograms, where the
images, graph and run metadata are in its files (read on demand, so memory stays small), and texts."""

import logging
import math
import threading

import numpy as np

from tensorweave.extension import tensor_protos

_log = logging.getLogger("tensorweave_board")
_SHOWN_PLUGINS = ("scalars", "histograms", "images", "text")


class ScalarSeries:
    """All points of one tag: steps (int64), wall times and values (float64) in numpy arrays that grow by
    doubling. ``arrays()`` hands out views of the filled part: points are only ever added past it (a
    purge makes new arrays), so a view stays valid while more points arrive. ``version`` counts changes."""

    __slots__ = ("_steps", "_walls", "_values", "_size", "version")

    def __init__(self):
        self._steps, self._walls, self._values = np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
        self._size = 0
        self.version = 0

    def __len__(self):
        return self._size

    def _room(self, more):
        need = self._size + more
        if need > self._steps.size:
            capacity = max(need, 2 * self._steps.size, 256)
            grown = []
            for old in (self._steps, self._walls, self._values):
                new = np.empty(capacity, dtype=old.dtype)
                new[:self._size] = old[:self._size]
                grown.append(new)
            self._steps, self._walls, self._values = grown
        self.version += 1
        return self._size, need

    def append(self, step, wall, value):
        i, self._size = self._room(1)
        self._steps[i], self._walls[i], self._values[i] = step, wall, value

    def extend(self, steps, walls, values):
        i, self._size = self._room(len(steps))
        self._steps[i:self._size], self._walls[i:self._size], self._values[i:self._size] = steps, walls, values

    def purge_from(self, step):
        steps, walls, values = self.arrays()
        keep = steps < step
        if not keep.all():
            self._steps, self._walls, self._values = steps[keep], walls[keep], values[keep]
            self._size = int(keep.sum())
            self.version += 1

    def arrays(self):
        """(steps, walls, values) of every point, as numpy views."""
        n = self._size
        return self._steps[:n], self._walls[:n], self._values[:n]


class Blob:
    """Where a payload lives: file, record offset, the value's tag and, for a tensor of several images,
    which element (-1: the value's own image)."""

    __slots__ = ("step", "wall", "path", "offset", "tag", "index", "width", "height")

    def __init__(self, step, wall, path, offset, tag, index=-1, width=0, height=0):
        self.step, self.wall, self.path, self.offset = step, wall, path, offset
        self.tag, self.index, self.width, self.height = tag, index, width, height


def _histogram_from_tensor(arr):
    """TF2's histogram tensors ([k, 3]: left edge, right edge, count) as (min, max, num, limits, counts)."""
    arr = np.asarray(arr, dtype=np.float64).reshape(-1, 3)
    if arr.size == 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, np.zeros(0), np.zeros(0)
    return (float(arr[0, 0]), float(arr[-1, 1]), float(arr[:, 2].sum()), 0.0, 0.0,
            np.concatenate([arr[:1, 0], arr[:, 1]]), np.concatenate([[0.0], arr[:, 2]]))


class RunData:
    """Accumulates one run's events: the loader calls ``add_batch(path, batch)`` for each block it reads;
    readers use the attributes under ``lock``."""

    def __init__(self, name):
        self.name = name
        self.lock = threading.Lock()
        self.scalars = {}
        self.histograms = {}
        self.images = {}
        self.texts = {}
        self.graph = None
        self.run_metadata = {}
        self.plugins = {}
        self.first_wall = None
        self.version = 0
        self._unshown = set()  # (plugin, tag) of tensor summaries that could not be read, warned about once

    def add_batch(self, path, batch, hold=4096):
        """Adds an ``EventBatch``, its decoded scalar points and its other events in file order. Takes
        ``lock`` itself, letting readers in every ``hold`` events: what they see is always a prefix of
        the file's data."""
        scalars, cursor, pending = batch.scalars, 0, {}
        stops = np.searchsorted(scalars.ordinals, batch.slow_ordinals).tolist()
        with self.lock:
            for n, (i, offset, event) in enumerate(batch.events(), 1):
                if stops[i] > cursor:
                    self._flush(pending)
                    self._add_points(scalars, cursor, stops[i])
                    cursor = stops[i]
                if event.HasField("summary") and len(event.summary.value) == 1:
                    # One simple value without metadata (add would append a point): gathered per tag.
                    value = event.summary.value[0]
                    if value.HasField("simple_value") and not value.HasField("metadata"):
                        columns = pending.get(value.tag)
                        if columns is None:
                            columns = pending[value.tag] = ([], [], [])
                        columns[0].append(event.step)
                        columns[1].append(event.wall_time)
                        columns[2].append(value.simple_value)
                        if self.first_wall is None and event.wall_time and math.isfinite(event.wall_time):
                            self.first_wall = event.wall_time
                        continue
                if pending:
                    self._flush(pending)
                self.add(path, offset, event)
                if n % hold == 0:
                    self._flush(pending)
                    self.lock.release()
                    self.lock.acquire()
            self._flush(pending)
            if len(scalars) > cursor:
                self._add_points(scalars, cursor, len(scalars))
            if batch.count:
                self.version += 1

    def _flush(self, pending):
        """Adds the points of plain scalar events parsed by protobuf, gathered per tag."""
        for tag, columns in pending.items():
            self._series(tag).extend(*columns)
        pending.clear()

    def _add_points(self, scalars, start, stop):
        """Scalar points ``start:stop`` of a batch, which lie between the same two other events."""
        walls = scalars.walls[start:stop]
        if self.first_wall is None:
            usable = np.flatnonzero((walls != 0) & np.isfinite(walls))
            if usable.size:
                self.first_wall = float(walls[usable[0]])
        ids, steps, values = scalars.tag_ids[start:stop], scalars.steps[start:stop], scalars.values[start:stop]
        if stop - start < 16:  # a few points between other events: one by one is quicker
            for i, step, wall, value in zip(ids.tolist(), steps.tolist(), walls.tolist(), values.tolist()):
                self._series(scalars.tags[i]).append(step, wall, value)
            return
        present = np.flatnonzero(np.bincount(ids, minlength=len(scalars.tags)))
        for i in present.tolist():
            mine = slice(None) if present.size == 1 else ids == i
            self._series(scalars.tags[i]).extend(steps[mine], walls[mine], values[mine])

    def _series(self, tag):
        series = self.scalars.get(tag)
        if series is None:
            series = self.scalars[tag] = ScalarSeries()
        return series

    def add(self, path, offset, event):
        what = event.WhichOneof("what")
        wall, step = event.wall_time, event.step
        if self.first_wall is None and wall and math.isfinite(wall):  # (the relative axis starts there)
            self.first_wall = wall
        if what == "summary":
            for value in event.summary.value:
                self._add_value(path, offset, step, wall, value)
        elif what == "graph_def":
            self.graph = Blob(step, wall, path, offset, "")
        elif what == "tagged_run_metadata":
            self.run_metadata[event.tagged_run_metadata.tag] = Blob(step, wall, path, offset,
                                                                    event.tagged_run_metadata.tag)
        elif what == "session_log" and event.session_log.status == 1:  # START: points from a crashed run's future
            self._purge_from(step)
        self.version += 1

    def _add_value(self, path, offset, step, wall, value):
        tag = value.tag
        if value.HasField("metadata") and value.metadata.plugin_data.plugin_name:
            self.plugins[tag] = value.metadata.plugin_data.plugin_name
        kind = value.WhichOneof("value")
        if kind == "simple_value":
            self._series(tag).append(step, wall, value.simple_value)
        elif kind == "histo":
            h = value.histo
            self.histograms.setdefault(tag, []).append(
                (step, wall, h.min, h.max, h.num, h.sum, h.sum_squares, np.array(h.bucket_limit), np.array(h.bucket)))
        elif kind == "image":
            self.images.setdefault(tag, []).append(Blob(step, wall, path, offset, tag, -1, value.image.width,
                                                        value.image.height))
        elif kind == "tensor":
            self._add_tensor(path, offset, step, wall, value)

    def _add_tensor(self, path, offset, step, wall, value):
        tag, plugin = value.tag, self.plugins.get(value.tag, "")
        try:
            self._add_array(path, offset, step, wall, tag, plugin, tensor_protos.tensor_proto_to_array(value.tensor))
        except (ValueError, TypeError) as e:  # a foreign writer's tensor: this value is skipped, not the file
            if plugin in _SHOWN_PLUGINS and (plugin, tag) not in self._unshown:
                self._unshown.add((plugin, tag))
                _log.warning("%s: the %s summary %r at byte %d cannot be shown (%s); skipped it and any more "
                             "like it", path, plugin, tag, offset, e)

    def _add_array(self, path, offset, step, wall, tag, plugin, arr):
        if plugin == "text":
            items = [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in arr.reshape(-1)]
            self.texts.setdefault(tag, []).append((step, wall, "\n".join(items)))
        elif plugin == "scalars" or (plugin == "" and arr.ndim == 0 and arr.dtype.kind in "fiu"):
            if arr.size != 1:
                raise ValueError(f"a scalar summary holds {arr.size} values")
            self._series(tag).append(step, wall, float(arr.reshape(-1)[0]))
        elif plugin == "histograms":
            histogram = _histogram_from_tensor(arr)
            self.histograms.setdefault(tag, []).append((step, wall, *histogram))
        elif plugin == "images" and arr.dtype == object and arr.size >= 2:
            flat = arr.reshape(-1)
            width, height = int(flat[0] or 0), int(flat[1] or 0)
            for i in range(2, flat.size):
                self.images.setdefault(tag if flat.size == 3 else f"{tag}/{i - 2}", []).append(
                    Blob(step, wall, path, offset, tag, i, width, height))

    def _purge_from(self, step):
        for series in self.scalars.values():
            series.purge_from(step)
        for store in (self.histograms, self.images, self.texts):
            for tag, items in store.items():
                store[tag] = [x for x in items if (x.step if isinstance(x, Blob) else x[0]) < step]

    def tags(self):
        return {"scalars": sorted(self.scalars), "histograms": sorted(self.histograms), "images": sorted(self.images),
                "text": sorted(self.texts), "graph": self.graph is not None,
                "run_metadata": sorted(self.run_metadata)}
