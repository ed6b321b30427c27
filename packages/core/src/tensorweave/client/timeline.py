"""Chrome trace export of a traced step (TF1's ``tensorflow.python.client.timeline``).

    run_metadata = tf.RunMetadata()
    sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=run_metadata)
    trace = timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format()
    open("timeline.json", "w").write(trace)   # open in chrome://tracing or ui.perfetto.dev

One process per device, one lane per thread, one complete event per op (name: op type; args: node
name, inputs, output bytes), and a flow arrow from each _Send to its _Recv.
"""

import json
import re

_LABEL = re.compile(r"^(.*?) = ([^(]*)\((.*)\)$")
_TRANSFER = re.compile(r"^(.*) @(.*)$")


def parse_label(label):
    """``'name = Op(a, b)'`` -> ('name', 'Op', ['a', 'b']); Send/Recv labels keep ``'t:0 @device'``."""
    match = _LABEL.match(label or "")
    if match is None:
        return label, "unknown", []
    inputs = [s.strip() for s in match.group(3).split(",") if s.strip()]
    return match.group(1), match.group(2), inputs


class ChromeTraceFormatter:
    """Builds the JSON object of Chrome's Trace Event Format."""

    def __init__(self):
        self._events = []
        self._metadata = []

    def emit_pid(self, name, pid):
        self._metadata.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}})
        self._metadata.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}})

    def emit_tid(self, name, pid, tid):
        self._metadata.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}})

    def emit_region(self, timestamp, duration, pid, tid, category, name, args):
        self._events.append({"ph": "X", "cat": category, "name": name, "pid": pid, "tid": tid,
                             "ts": timestamp, "dur": duration, "args": args})

    def emit_flow_start(self, name, timestamp, pid, tid, flow_id):
        self._events.append({"ph": "s", "cat": "DataFlow", "name": name, "pid": pid, "tid": tid,
                             "ts": timestamp, "id": flow_id})

    def emit_flow_end(self, name, timestamp, pid, tid, flow_id):
        self._events.append({"ph": "f", "bp": "e", "cat": "DataFlow", "name": name, "pid": pid, "tid": tid,
                             "ts": timestamp, "id": flow_id})

    def emit_counter(self, category, name, pid, timestamp, counter, value):
        self._events.append({"ph": "C", "cat": category, "name": name, "pid": pid, "ts": timestamp,
                             "args": {counter: value}})

    def format_to_string(self, pretty=False):
        trace = {"traceEvents": self._metadata + self._events, "displayTimeUnit": "ns"}
        return json.dumps(trace, indent=4 if pretty else None, separators=None if pretty else (",", ":"))


class Timeline:
    """``Timeline(step_stats, graph=None)``: a traced step as a Chrome trace. ``graph`` is accepted as
    in TF1; the step's labels already name each op's inputs."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The trace as a JSON string. ``show_dataflow`` draws Send→Recv arrows; ``show_memory`` adds a
        counter per device of the bytes its ops' outputs have produced so far in the step."""
        chrome = ChromeTraceFormatter()
        dev_stats = list(self._step_stats.dev_stats)
        starts = [ns.all_start_micros for d in dev_stats for ns in d.node_stats]
        base = min(starts) if starts else 0
        sends, recvs = {}, {}
        for pid, dev in enumerate(dev_stats):
            chrome.emit_pid(f"{dev.device} Compute", pid)
            lanes = {}
            produced = 0
            for ns in dev.node_stats:
                tid = lanes.get(ns.thread_id)
                if tid is None:
                    tid = lanes[ns.thread_id] = len(lanes)
                    names = getattr(dev, "thread_names", {}) or {}
                    chrome.emit_tid(names.get(ns.thread_id, f"thread {ns.thread_id}"), pid, tid)
                start = ns.all_start_micros - base
                duration = max(ns.all_end_rel_micros, 0)
                name, op, inputs = parse_label(ns.timeline_label)
                args = {"name": ns.node_name, "op": ns.op_type, "output_bytes": ns.output_bytes}
                if inputs:
                    args["inputs"] = inputs
                chrome.emit_region(start, duration, pid, tid, "Op", ns.op_type, args)
                if show_memory:
                    produced += ns.output_bytes
                    chrome.emit_counter("Memory", f"{dev.device} outputs produced", pid, start + duration,
                                        "bytes", produced)
                if ns.op_type in ("_Send", "_Recv") and inputs:
                    match = _TRANSFER.match(inputs[0])
                    if match is not None:
                        tensor, peer = match.groups()
                        if ns.op_type == "_Send":
                            sends.setdefault((tensor, dev.device, peer), []).append((start, pid, tid))
                        else:
                            recvs.setdefault((tensor, peer, dev.device), []).append((start, duration, pid, tid))
        if show_dataflow:
            self._emit_transfers(chrome, sends, recvs)
        return chrome.format_to_string()

    @staticmethod
    def _emit_transfers(chrome, sends, recvs):
        """One arrow per Send/Recv pair; in a loop the n-th Send of a key goes to its n-th Recv."""
        flow_id = 0
        for key, sent in sorted(sends.items()):
            received = sorted(recvs.get(key, ()))
            for (send_ts, send_pid, send_tid), (recv_ts, recv_dur, recv_pid, recv_tid) in zip(sorted(sent), received):
                tensor = key[0]
                arrive = min(max(send_ts, recv_ts), recv_ts + recv_dur)
                chrome.emit_flow_start(tensor, send_ts, send_pid, send_tid, flow_id)
                chrome.emit_flow_end(tensor, arrive, recv_pid, recv_tid, flow_id)
                flow_id += 1
