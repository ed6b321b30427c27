"""Everything the dashboard knows about one run: every scalar point (no sampling), histograms, where the
images, graph and run metadata are in its files (read on demand, so memory stays small), and texts."""

import array
import threading

import numpy as np

from tensorweave_board.tensor_codec import tensor_proto_to_array


class ScalarSeries:
    """All points of one tag: steps, wall times and values in compact arrays."""

    __slots__ = ("steps", "walls", "values", "_cache")

    def __init__(self):
        self.steps, self.walls, self.values = array.array("q"), array.array("d"), array.array("d")
        self._cache = None

    def __len__(self):
        return len(self.steps)

    def append(self, step, wall, value):
        self.steps.append(step)
        self.walls.append(wall)
        self.values.append(value)

    def purge_from(self, step):
        keep = [i for i, s in enumerate(self.steps) if s < step]
        if len(keep) != len(self.steps):
            self.steps = array.array("q", (self.steps[i] for i in keep))
            self.walls = array.array("d", (self.walls[i] for i in keep))
            self.values = array.array("d", (self.values[i] for i in keep))
            self._cache = None

    def arrays(self):
        """(steps, walls, values) as numpy arrays, copied once per new length."""
        if self._cache is None or len(self._cache[0]) != len(self.steps):
            self._cache = (np.array(self.steps, dtype=np.int64), np.array(self.walls), np.array(self.values))
        return self._cache


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
    """Accumulates one run's events. ``add(path, offset, event)`` is called by the loader; readers use the
    attributes under ``lock``."""

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

    def consumer(self, path):
        """``consume(offset, event)`` for ``EventFileLoader.parse_into``: plain scalar summaries, by far the
        most common events, take a short path."""
        scalars, add = self.scalars, self.add

        def consume(offset, event):
            if event.HasField("summary"):
                values = event.summary.value
                if len(values) == 1:
                    value = values[0]
                    if value.HasField("simple_value") and not value.HasField("metadata"):
                        series = scalars.get(value.tag)
                        if series is not None:
                            series.steps.append(event.step)
                            series.walls.append(event.wall_time)
                            series.values.append(value.simple_value)
                            return
            add(path, offset, event)

        return consume

    def add(self, path, offset, event):
        what = event.WhichOneof("what")
        wall, step = event.wall_time, event.step
        if self.first_wall is None and wall:
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
            series = self.scalars.get(tag)
            if series is None:
                series = self.scalars[tag] = ScalarSeries()
            series.append(step, wall, value.simple_value)
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
            arr = tensor_proto_to_array(value.tensor)
        except ValueError:
            return
        if plugin == "text":
            items = [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in arr.reshape(-1)]
            self.texts.setdefault(tag, []).append((step, wall, "\n".join(items)))
        elif plugin == "scalars" or (plugin == "" and arr.ndim == 0 and arr.dtype.kind in "fiu"):
            series = self.scalars.setdefault(tag, ScalarSeries())
            series.append(step, wall, float(arr))
        elif plugin == "histograms":
            self.histograms.setdefault(tag, []).append((step, wall, *_histogram_from_tensor(arr)))
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
