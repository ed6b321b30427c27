"""``tf.summary.FileWriter`` and ``FileWriterCache``, as in TF 1.x: summaries, graphs, session logs and
run metadata go into an event file in ``logdir`` that TensorBoard (and tensorweave-board) reads."""

import threading
import time

import numpy as np

from tensorweave_board import protos
from tensorweave_board.event_file_writer import EventFileWriter
from tensorweave_board.graph_convert import graph_def_proto, run_metadata_proto

__all__ = ["FileWriter", "FileWriterCache"]


def _as_summary(summary):
    if isinstance(summary, protos.Summary):
        return summary
    if isinstance(summary, np.ndarray) and summary.dtype == object and summary.ndim == 0:
        summary = summary.item()
    if isinstance(summary, bytes | bytearray):
        return protos.Summary.FromString(bytes(summary))
    if hasattr(summary, "SerializeToString") and type(summary).__name__ == "Summary":
        return protos.Summary.FromString(summary.SerializeToString())  # another library's Summary class
    raise TypeError(f"add_summary takes a Summary proto or its serialized bytes (what a summary op returns), "
                    f"not {type(summary).__name__}")


class FileWriter:
    """Writes events to a new event file in ``logdir``, on a background thread.

    ``graph`` (or ``graph_def``) is written first, so the dashboard can show it. Events are flushed every
    ``flush_secs`` seconds and on ``flush()``/``close()``; at most ``max_queue`` wait to be written.
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        if session is not None:
            graph = graph or getattr(session, "graph", None)
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._seen_summary_tags = set()
        self._run_metadata_tags = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event):
        """Writes ``event`` (an Event proto) as given."""
        self.event_writer.add_event(event)

    def _add_event(self, event, step):
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None):
        """Writes a Summary (the bytes a summary op returns, or the proto) at ``global_step``.

        A tag's metadata (plugin name, description) is written with its first value only, as TF does.
        """
        summary = protos.Summary.FromString(_as_summary(summary).SerializeToString())
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
            else:
                self._seen_summary_tags.add(value.tag)
        self._add_event(protos.Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None):
        """Writes a SessionLog (START, STOP or CHECKPOINT): the dashboard drops points a restart made stale."""
        self._add_event(protos.Event(session_log=session_log), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes the graph (a tf.Graph, or ``graph_def``) for the dashboard's graph view."""
        if graph is not None and graph_def is not None:
            raise ValueError("add_graph takes a graph or a graph_def, not both")
        proto = graph_def_proto(graph=graph, graph_def=graph_def, add_shapes=True)
        self._add_event(protos.Event(graph_def=proto.SerializeToString()), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Writes the graph held by ``meta_graph_def`` (the dashboard shows graphs, not the rest of it)."""
        graph_def = getattr(meta_graph_def, "graph_def", None)
        if graph_def is None:
            raise TypeError(f"add_meta_graph needs a MetaGraphDef with a graph_def, got "
                            f"{type(meta_graph_def).__name__}")
        self.add_graph(None, global_step=global_step, graph_def=graph_def)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes the step statistics of one traced ``Session.run`` under ``tag`` (unique per writer)."""
        if tag in self._run_metadata_tags:
            raise ValueError(f"run metadata tag {tag!r} was already used by this FileWriter; give each traced "
                             f"step its own tag, e.g. 'step{global_step}'")
        self._run_metadata_tags.add(tag)
        data = run_metadata_proto(run_metadata).SerializeToString()
        self._add_event(protos.Event(tagged_run_metadata=protos.TaggedRunMetadata(tag=tag, run_metadata=data)),
                        global_step)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FileWriterCache:
    """One shared FileWriter per log directory (what SummarySaverHook uses when given no writer)."""

    _cache = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        from tensorweave import get_default_graph  # on first use: the dashboard imports this module without tensorweave
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriterCache._cache[logdir] = FileWriter(logdir, graph=get_default_graph())
            return writer

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            writers, FileWriterCache._cache = list(FileWriterCache._cache.values()), {}
        for writer in writers:
            writer.close()
