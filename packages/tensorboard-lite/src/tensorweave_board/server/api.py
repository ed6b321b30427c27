"""The dashboard's data API: each handler takes the query parameters and returns (status, content type,
body). Runs and tags are looked up by name among what was loaded, never joined into a path, so nothing
outside the log directory can be reached; an unknown run, tag or scope is a 404."""

import csv
import io
import json
import math

import numpy as np

from tensorweave_board import protos
from tensorweave_board.record_io import read_record_at
from tensorweave_board.server.downsample import ema, minmax_indices
from tensorweave_board.server.graph_view import GraphView
from tensorweave_board.server.timeline import chrome_trace, timeline
from tensorweave_board.tensor_codec import tensor_proto_to_array


class NotFound(Exception):
    pass


class BadRequest(Exception):
    pass


def _json(obj):
    return 200, "application/json", json.dumps(obj, allow_nan=False, separators=(",", ":")).encode()


def _float(params, key, default=None):
    if key not in params or params[key] == "":
        return default
    try:
        value = float(params[key])
    except ValueError:
        raise BadRequest(f"{key} must be a number, got {params[key]!r}") from None
    if not math.isfinite(value):
        raise BadRequest(f"{key} must be finite")
    return value


class Api:
    def __init__(self, logdir):
        self.logdir = logdir
        self._graphs = {}
        self._smoothed = {}

    def _run(self, params):
        run = self.logdir.runs.get(params.get("run", ""))
        if run is None:
            raise NotFound(f"no run named {params.get('run')!r}")
        return run

    @staticmethod
    def _tagged(store, params, what):
        items = store.get(params.get("tag", ""))
        if items is None:
            raise NotFound(f"no {what} tagged {params.get('tag')!r}")
        return items

    LONG_POLL = 25.0

    def runs(self, params):
        """Every run with its tags and point counts. With ``after`` (a generation the page has), waits up to
        ``wait`` seconds for newer data first, so a page learns of new data as soon as it is read."""
        after = _float(params, "after")
        if after is not None:
            self.logdir.wait_for_change(int(after), min(max(_float(params, "wait", 0.0), 0.0), self.LONG_POLL))
        generation = self.logdir.generation
        out = []
        for name in sorted(self.logdir.runs):
            run = self.logdir.runs[name]
            with run.lock:
                tags = run.tags()
                counts = {tag: len(series) for tag, series in run.scalars.items()}
            out.append({"name": name, "tags": tags, "scalar_counts": counts, "version": run.version})
        return _json({"runs": out, "files": self.logdir.files(), "loads": self.logdir.loads,
                      "generation": generation})

    def scalars(self, params):
        run = self._run(params)
        with run.lock:
            series = self._tagged(run.scalars, params, "scalars")
            steps, walls, values = series.arrays()
            version = series.version
            first_wall = run.first_wall or 0.0
        axis = params.get("x", "step")
        if axis not in ("step", "relative", "wall"):
            raise BadRequest("x must be step, relative or wall")
        weight = _float(params, "smoothing", 0.0)
        if not 0 <= weight < 1:
            raise BadRequest("smoothing must be in [0, 1)")
        buckets = int(min(max(_float(params, "buckets", 1000), 10), 10000))
        x = steps.astype(np.float64) if axis == "step" else (walls - first_wall if axis == "relative" else walls)
        finite = np.isfinite(values)
        smoothed = self._ema((run.name, params["tag"], weight), version, values, weight)
        if not finite.all():
            x, steps, walls, values, smoothed = (a[finite] for a in (x, steps, walls, values, smoothed))
        order = None if x.size < 2 or np.all(x[1:] >= x[:-1]) else np.argsort(x, kind="stable")
        if order is not None:
            x, steps, walls, values, smoothed = (a[order] for a in (x, steps, walls, values, smoothed))
        idx = minmax_indices(x, values, _float(params, "min"), _float(params, "max"), buckets)
        return _json({"run": run.name, "tag": params["tag"], "x_axis": axis, "total": int(finite.size),
                      "nonfinite": int((~finite).sum()), "shown": int(idx.size),
                      "x_range": [float(x[0]), float(x[-1])] if x.size else None,
                      "x": x[idx].tolist(), "step": steps[idx].tolist(), "wall": walls[idx].tolist(),
                      "value": values[idx].tolist(), "smoothed": smoothed[idx].tolist()})

    def _ema(self, key, version, values, weight):
        """The smoothed series, kept until the series changes (its ``version``)."""
        cached = self._smoothed.get(key)
        if cached is None or cached[0] != version:
            if len(self._smoothed) > 256:
                self._smoothed.clear()
            cached = self._smoothed[key] = (version, ema(values, weight))
        return cached[1]

    def scalars_csv(self, params):
        run = self._run(params)
        with run.lock:
            steps, walls, values = self._tagged(run.scalars, params, "scalars").arrays()
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["wall_time", "step", "value"])
        writer.writerows(zip(walls.tolist(), steps.tolist(), values.tolist()))
        return 200, "text/csv; charset=utf-8", out.getvalue().encode()

    def histograms(self, params):
        run = self._run(params)
        with run.lock:
            items = list(self._tagged(run.histograms, params, "histograms"))
        limit = int(_float(params, "max", 50))
        if len(items) > limit:
            items = [items[int(round(i))] for i in np.linspace(0, len(items) - 1, limit)]
        bins = int(_float(params, "bins", 40))
        finite = [it for it in items if it[4] > 0]
        lo = min((it[2] for it in finite), default=0.0)
        hi = max((it[3] for it in finite), default=1.0)
        hi = hi if hi > lo else lo + 1.0
        edges = np.linspace(lo, hi, bins + 1)
        out = []
        for step, wall, hmin, hmax, num, _, _, limits, counts in items:
            out.append({"step": step, "wall": wall, "min": hmin if num else None, "max": hmax if num else None,
                        "num": num, "counts": _rebin(hmin, hmax, limits, counts, edges).tolist()})
        return _json({"run": run.name, "tag": params["tag"], "edges": edges.tolist(), "histograms": out})

    def images(self, params):
        run = self._run(params)
        with run.lock:
            blobs = self._tagged(run.images, params, "images")
            return _json({"run": run.name, "tag": params["tag"], "images": [
                {"index": i, "step": b.step, "wall": b.wall, "width": b.width, "height": b.height}
                for i, b in enumerate(blobs)]})

    def image(self, params):
        run = self._run(params)
        with run.lock:
            blobs = self._tagged(run.images, params, "images")
            try:
                blob = blobs[int(params.get("index", "-1"))]
            except (ValueError, IndexError):
                raise NotFound(f"no image {params.get('index')!r} for that tag") from None
        event = protos.Event.FromString(read_record_at(blob.path, blob.offset))
        for value in event.summary.value:
            if value.tag == blob.tag:
                if blob.index < 0:
                    return 200, "image/png", value.image.encoded_image_string
                return 200, "image/png", tensor_proto_to_array(value.tensor).reshape(-1)[blob.index]
        raise NotFound("the image is no longer in its event file")

    def text(self, params):
        run = self._run(params)
        with run.lock:
            items = self._tagged(run.texts, params, "text")
            return _json({"run": run.name, "tag": params["tag"],
                          "texts": [{"step": s, "wall": w, "text": t} for s, w, t in items]})

    def _run_metadata(self, run, tag):
        with run.lock:
            blob = run.run_metadata.get(tag)
        if blob is None:
            return None
        event = protos.Event.FromString(read_record_at(blob.path, blob.offset))
        return protos.RunMetadata.FromString(event.tagged_run_metadata.run_metadata)

    def graph(self, params):
        run = self._run(params)
        with run.lock:
            blob = run.graph
            meta_tags = sorted(run.run_metadata, key=lambda t: run.run_metadata[t].step)
        if blob is None:
            raise NotFound(f"run {run.name!r} has no graph")
        key = (run.name, blob.path, blob.offset, meta_tags[-1] if meta_tags else None)
        view = self._graphs.get(key)
        if view is None:
            graph_def = protos.GraphDef.FromString(
                protos.Event.FromString(read_record_at(blob.path, blob.offset)).graph_def)
            devices = {}
            if meta_tags:
                metadata = self._run_metadata(run, meta_tags[-1])
                devices = {s.node_name: d.device for d in metadata.step_stats.dev_stats for s in d.node_stats}
            view = self._graphs[key] = GraphView(graph_def, devices)
        try:
            return _json(view.scope(params.get("scope", "")))
        except KeyError:
            raise NotFound(f"no scope {params.get('scope')!r} in the graph") from None

    def timeline(self, params):
        metadata = self._run_metadata(self._run(params), params.get("tag", ""))
        if metadata is None:
            raise NotFound(f"no run metadata tagged {params.get('tag')!r}")
        return _json(timeline(metadata))

    def trace(self, params):
        metadata = self._run_metadata(self._run(params), params.get("tag", ""))
        if metadata is None:
            raise NotFound(f"no run metadata tagged {params.get('tag')!r}")
        return _json(chrome_trace(metadata))

    ROUTES = {"runs": runs, "scalars": scalars, "scalars.csv": scalars_csv, "histograms": histograms,
              "images": images, "image": image, "text": text, "graph": graph, "timeline": timeline, "trace": trace}

    def handle(self, route, params):
        handler = self.ROUTES.get(route)
        if handler is None:
            raise NotFound(f"no API route {route!r}")
        return handler(self, params)


def _rebin(hmin, hmax, limits, counts, edges):
    """Counts of a histogram's buckets spread over ``edges``, each bucket's mass uniform over its range
    (clipped to the data's min and max), as TensorBoard does for display."""
    out = np.zeros(len(edges) - 1)
    if len(counts) == 0:
        return out
    lefts = np.concatenate([[hmin], limits[:-1]])
    lefts, rights = np.clip(lefts, hmin, hmax), np.clip(limits, hmin, hmax)
    for left, right, count in zip(lefts, rights, counts):
        if count <= 0:
            continue
        if right <= left:
            i = min(max(int(np.searchsorted(edges, left, side="right")) - 1, 0), len(out) - 1)
            out[i] += count
            continue
        overlap = np.clip(np.minimum(edges[1:], right) - np.maximum(edges[:-1], left), 0, None)
        out += count * overlap / (right - left)
    return out
