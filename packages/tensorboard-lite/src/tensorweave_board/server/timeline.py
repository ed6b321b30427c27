"""The step timeline of a traced ``Session.run``: one lane per device and thread, one bar per op, from
RunMetadata's step statistics; also as a Chrome trace (chrome://tracing, Perfetto)."""


def _end_micros(stats):
    return stats.all_start_micros + max(stats.all_end_rel_micros, stats.op_end_rel_micros, 1)


def timeline(run_metadata):
    """{'start': µs since the epoch, 'duration': µs, 'lanes': [{'device', 'thread', 'ops': [[name, op,
    start µs from the step's start, duration µs]]}]}"""
    all_stats = [(dev, s) for dev in run_metadata.step_stats.dev_stats for s in dev.node_stats]
    if not all_stats:
        return {"start": 0, "duration": 0, "lanes": []}
    start = min(s.all_start_micros for _, s in all_stats)
    end = max(_end_micros(s) for _, s in all_stats)
    lanes = {}
    for dev, s in all_stats:
        key = (dev.device, s.thread_id)
        if key not in lanes:
            lanes[key] = {"device": dev.device, "thread": dev.thread_names.get(s.thread_id, f"thread {s.thread_id}"),
                          "ops": []}
        label = s.timeline_label or s.node_name
        op_type = label.split("=", 1)[1].strip().split("(")[0] if "=" in label else ""
        duration = _end_micros(s) - s.all_start_micros
        lanes[key]["ops"].append([s.node_name, op_type, s.all_start_micros - start, duration])
    return {"start": start, "duration": end - start, "lanes": [lanes[k] for k in sorted(lanes)]}


def chrome_trace(run_metadata):
    """The same statistics in the Chrome trace event format: a process per device, a thread per lane."""
    events, pids = [], {}
    for dev in run_metadata.step_stats.dev_stats:
        pid = pids.setdefault(dev.device, len(pids))
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": dev.device}})
        for s in dev.node_stats:
            events.append({"name": s.node_name, "ph": "X", "pid": pid, "tid": s.thread_id, "ts": s.all_start_micros,
                           "dur": _end_micros(s) - s.all_start_micros, "args": {"label": s.timeline_label}})
    return {"traceEvents": events, "displayTimeUnit": "ms"}
