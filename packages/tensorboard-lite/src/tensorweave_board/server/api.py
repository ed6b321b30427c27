"""The dashboard's data API: each handler takes the query parameters and returns (status, content type,
body). Runs and tags are looked up by name among what was loaded, never joined into a path, so nothing
outside the log directory can be reached; an unknown run, tag or scope is a 404. Every parameter is read
with its type and range (``query``): anything else is a 400 naming it. Numbers JSON cannot hold go out as
strings (``replies``)."""

import csv
import io

import numpy as np
from google.protobuf.message import DecodeError

from tensorweave_board import protos
from tensorweave_board.record_io import read_record_at
from tensorweave_board.server import query
from tensorweave_board.server.downsample import ema, marker_indices, minmax_indices
from tensorweave_board.server.graph_view import GraphView
from tensorweave_board.server.histogram_bins import histogram_view
from tensorweave_board.server.query import BadRequest
from tensorweave_board.server.replies import json_reply
from tensorweave_board.server.timeline import chrome_trace, timeline
from tensorweave.extension import tensor_protos

__all__ = ["Api", "BadRequest", "NotFound"]


class NotFound(Exception):
    pass


class Api:
    LONG_POLL = 25.0  # seconds a page may ask /api/runs to wait for new data
    MAX_BUCKETS = 10000  # x buckets of a scalar chart (about one a pixel)
    MAX_BINS = 500  # bins of a histogram chart
    MAX_STEPS = 500  # steps of a histogram chart

    def __init__(self, logdir):
        self.logdir = logdir
        self._graphs = {}  # run name: (key, GraphView), the run's latest graph only
        self._smoothed = {}  # (run, tag): (version, weight, smoothed values), the latest smoothing only

    def _run(self, params):
        name = query.text(params, "run")
        run = self.logdir.runs.get(name)
        if run is None:
            raise NotFound(f"no run named {name!r}")
        return run

    @staticmethod
    def _tagged(store, params, what):
        tag = query.text(params, "tag")
        items = store.get(tag)
        if items is None:
            raise NotFound(f"no {what} tagged {tag!r}")
        return items

    def runs(self, params):
        """Every run with its tags and point counts. With ``after`` (a generation the page has), waits up to
        ``wait`` seconds for newer data first, so a page learns of new data as soon as it is read."""
        after = query.integer(params, "after")
        wait = query.number(params, "wait", 0.0, 0.0, self.LONG_POLL)
        if after is not None:
            self.logdir.wait_for_change(after, wait)
        generation = self.logdir.generation
        out = []
        for name in sorted(self.logdir.runs):
            run = self.logdir.runs[name]
            with run.lock:
                tags = run.tags()
                counts = {tag: len(series) for tag, series in run.scalars.items()}
            out.append({"name": name, "tags": tags, "scalar_counts": counts, "version": run.version})
        return json_reply({"runs": out, "files": self.logdir.files(), "loads": self.logdir.loads,
                           "generation": generation})

    def scalars(self, params):
        """A chart's points: per x bucket of the visible range, the first, last, smallest and largest finite
        value, and the first NaN, +Infinity and -Infinity (drawn as marks); points with no place on the x
        axis (a NaN wall time) are counted in ``no_x``."""
        axis = query.choice(params, "x", ("step", "relative", "wall"), "step")
        weight = query.number(params, "smoothing", 0.0, 0.0, 1.0, below_high=True)
        buckets = query.integer(params, "buckets", 1000, 1, self.MAX_BUCKETS)
        lo, hi = query.number(params, "min"), query.number(params, "max")
        if lo is not None and hi is not None and lo > hi:
            raise BadRequest(f"min must not be above max, got min={lo:g} and max={hi:g}")
        run = self._run(params)
        with run.lock:
            series = self._tagged(run.scalars, params, "scalars")
            steps, walls, values = series.arrays()
            version = series.version
            first_wall = run.first_wall or 0.0
        tag = params["tag"]
        smoothed = self._ema((run.name, tag), version, values, weight)
        x = steps.astype(np.float64) if axis == "step" else (walls - first_wall if axis == "relative" else walls)
        finite = np.isfinite(values)
        total, nonfinite = x.size, int(x.size - np.count_nonzero(finite))
        if axis != "step" and not np.isfinite(x).all():
            placed = np.isfinite(x)
            x, steps, walls, values, smoothed, finite = (a[placed] for a in (x, steps, walls, values, smoothed,
                                                                            finite))
        order = None if x.size < 2 or np.all(x[1:] >= x[:-1]) else np.argsort(x, kind="stable")
        if order is not None:
            x, steps, walls, values, smoothed, finite = (a[order] for a in (x, steps, walls, values, smoothed,
                                                                           finite))
        if not nonfinite or finite.all():
            idx = minmax_indices(x, values, lo, hi, buckets)
        else:
            good, bad = np.flatnonzero(finite), np.flatnonzero(~finite)
            idx = np.union1d(good[minmax_indices(x[good], values[good], lo, hi, buckets)],
                             bad[marker_indices(x[bad], values[bad], lo, hi, buckets)])
        return json_reply({"run": run.name, "tag": tag, "x_axis": axis, "total": total,
                           "nonfinite": nonfinite, "no_x": total - x.size,
                           "shown": int(idx.size), "x_range": [float(x[0]), float(x[-1])] if x.size else None,
                           "x": x[idx].tolist(), "step": steps[idx].tolist(), "wall": walls[idx].tolist(),
                           "value": values[idx].tolist(), "smoothed": smoothed[idx].tolist()})

    def _ema(self, key, version, values, weight):
        """The smoothed series, kept until the series changes (its ``version``) or is smoothed otherwise: one
        copy a series, however many weights are asked for."""
        cached = self._smoothed.get(key)
        if cached is None or cached[0] != version or cached[1] != weight:
            cached = self._smoothed[key] = (version, weight, ema(values, weight))
        return cached[2]

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
        steps = query.integer(params, "max", 50, 1, self.MAX_STEPS)
        bins = query.integer(params, "bins", 40, 1, self.MAX_BINS)
        run = self._run(params)
        with run.lock:
            items = list(self._tagged(run.histograms, params, "histograms"))
        return json_reply({"run": run.name, "tag": params["tag"], **histogram_view(items, bins, steps)})

    def images(self, params):
        run = self._run(params)
        with run.lock:
            blobs = self._tagged(run.images, params, "images")
            return json_reply({"run": run.name, "tag": params["tag"], "images": [
                {"index": i, "step": b.step, "wall": b.wall, "width": b.width, "height": b.height}
                for i, b in enumerate(blobs)]})

    def image(self, params):
        index = query.integer(params, "index")
        if index is None:
            raise BadRequest("index is missing: this request needs ?index=... (from /api/images)")
        run = self._run(params)
        with run.lock:
            blobs = self._tagged(run.images, params, "images")
            if index >= len(blobs):
                raise NotFound(f"no image {index} for that tag: it has {len(blobs)} (index 0 to {len(blobs) - 1})")
            blob = blobs[index]
        for value in self._event_at(blob, "image").summary.value:
            if value.tag == blob.tag:
                if blob.index < 0:
                    return 200, "image/png", value.image.encoded_image_string
                return 200, "image/png", tensor_protos.tensor_proto_to_array(value.tensor).reshape(-1)[blob.index]
        raise NotFound("the image is no longer in its event file")

    @staticmethod
    def _event_at(blob, what):
        """The event a payload was read from, read again; a 404 if its file changed since."""
        try:
            return protos.Event.FromString(read_record_at(blob.path, blob.offset))
        except (OSError, ValueError, DecodeError) as e:
            raise NotFound(f"the {what} is no longer readable (its event file changed since it was read): "
                           f"{e}") from None

    def text(self, params):
        run = self._run(params)
        with run.lock:
            items = self._tagged(run.texts, params, "text")
            return json_reply({"run": run.name, "tag": params["tag"],
                               "texts": [{"step": s, "wall": w, "text": t} for s, w, t in items]})

    def _run_metadata(self, run, tag):
        with run.lock:
            blob = run.run_metadata.get(tag)
        if blob is None:
            return None
        try:
            return protos.RunMetadata.FromString(self._event_at(blob, "run metadata").tagged_run_metadata.run_metadata)
        except DecodeError as e:
            raise NotFound(f"the run metadata tagged {tag!r} is not readable: {e}") from None

    def graph(self, params):
        run = self._run(params)
        scope = params.get("scope", "")
        with run.lock:
            blob = run.graph
            meta_tags = sorted(run.run_metadata, key=lambda t: run.run_metadata[t].step)
        if blob is None:
            raise NotFound(f"run {run.name!r} has no graph")
        key = (blob.path, blob.offset, meta_tags[-1] if meta_tags else None)
        cached = self._graphs.get(run.name)
        if cached is None or cached[0] != key:
            try:
                graph_def = protos.GraphDef.FromString(self._event_at(blob, "graph").graph_def)
            except DecodeError as e:
                raise NotFound(f"run {run.name!r}'s graph is not readable: {e}") from None
            devices = {}
            metadata = self._run_metadata(run, meta_tags[-1]) if meta_tags else None
            if metadata is not None:
                devices = {s.node_name: d.device for d in metadata.step_stats.dev_stats for s in d.node_stats}
            cached = self._graphs[run.name] = (key, GraphView(graph_def, devices))
        try:
            return json_reply(cached[1].scope(scope))
        except KeyError:
            raise NotFound(f"no scope {scope!r} in the graph") from None

    def _traced(self, params):
        run = self._run(params)
        tag = query.text(params, "tag")
        metadata = self._run_metadata(run, tag)
        if metadata is None:
            raise NotFound(f"no run metadata tagged {tag!r}")
        return metadata

    def timeline(self, params):
        return json_reply(timeline(self._traced(params)))

    def trace(self, params):
        return json_reply(chrome_trace(self._traced(params)))

    ROUTES = {"runs": runs, "scalars": scalars, "scalars.csv": scalars_csv, "histograms": histograms,
              "images": images, "image": image, "text": text, "graph": graph, "timeline": timeline, "trace": trace}

    def handle(self, route, params):
        handler = self.ROUTES.get(route)
        if handler is None:
            raise NotFound(f"no API route {route!r}")
        return handler(self, params)
