"""Tracing: RunOptions(trace_level=FULL_TRACE) fills RunMetadata's step stats and partition graphs;
the timeline exporter writes a Chrome trace with one process per device and Send→Recv flows."""

import json

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.client import timeline

CPU = "/job:localhost/replica:0/task:0/device:CPU:"
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _two_device_graph():
    x = tf.placeholder(tf.float32, [64, 64], name="x")
    with tf.device("/cpu:1"):
        y = tf.matmul(x, x, name="product")
    with tf.device("/cpu:0"):
        z = tf.reduce_sum(y, name="total")
    return x, y, z


def _traced(sess, fetches, feed, options=FULL):
    meta = tf.RunMetadata()
    value = sess.run(fetches, feed, options=options, run_metadata=meta)
    return value, meta


@pytest.mark.parametrize("executor", ["linear", "dataflow"])
def test_full_trace_fills_step_stats_per_device(executor):
    x, y, z = _two_device_graph()
    feed = {x: np.ones((64, 64), np.float32)}
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2}, executor=executor)) as s:
        value, meta = _traced(s, [y, z], feed)
    assert value[1] == 64.0 * 64 * 64
    by_device = {d.device: {n.node_name: n for n in d.node_stats} for d in meta.step_stats.dev_stats}
    assert set(by_device) == {CPU + "0", CPU + "1"}
    product = by_device[CPU + "1"]["product"]
    assert product.op_type == "MatMul" and product.output_bytes == 64 * 64 * 4
    assert product.output[0].shape == [64, 64] and product.output[0].dtype == "float32"
    assert product.timeline_label.startswith("product = MatMul(")
    assert "total" in by_device[CPU + "0"]
    for stats in by_device.values():
        for n in stats.values():
            assert n.all_start_micros > 1.5e15 and n.all_end_rel_micros >= n.op_end_rel_micros >= 0
            assert isinstance(n.thread_id, int)
    threads = {n.thread_id for stats in by_device.values() for n in stats.values()}
    assert len(threads) >= 2  # partitions run side by side
    send = next(n for n in by_device[CPU + "1"].values() if n.op_type == "_Send")
    assert send.timeline_label.endswith(f"(product:0 @{CPU}0)")
    assert len(meta.partition_graphs) == 2
    assert {n.device for g in meta.partition_graphs for n in g.node} == {CPU + "0", CPU + "1"}


def test_no_trace_leaves_run_metadata_empty_and_software_trace_fills_stats():
    x, y, z = _two_device_graph()
    feed = {x: np.ones((64, 64), np.float32)}
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        _, meta = _traced(s, z, feed, tf.RunOptions())
        assert meta.step_stats.dev_stats == [] and meta.partition_graphs == []
        _, meta = _traced(s, z, feed, tf.RunOptions(trace_level=tf.RunOptions.SOFTWARE_TRACE))
        assert meta.step_stats.dev_stats and meta.partition_graphs == []


def test_traced_loop_records_every_iteration():
    n = tf.placeholder(tf.int32, [])
    _, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + 2.0), [0, 0.0])
    with tf.Session() as s:
        value, meta = _traced(s, acc, {n: 7})
    assert value == 14.0
    live = [ns.node_name for d in meta.step_stats.dev_stats for ns in d.node_stats if ns.output_bytes]
    assert live.count("while/NextIteration_1") == 7  # and once more dead, when the loop ends


def _trace_json(meta, **kw):
    text = timeline.Timeline(meta.step_stats).generate_chrome_trace_format(**kw)
    return json.loads(text)


def test_timeline_is_chrome_trace_json_with_devices_threads_ops_and_flows(tmp_path):
    x, y, z = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        _, meta = _traced(s, z, {x: np.ones((64, 64), np.float32)})
    path = tmp_path / "timeline.json"
    path.write_text(timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(processes.values()) == [CPU + "0 Compute", CPU + "1 Compute"]
    ops = [e for e in events if e["ph"] == "X"]
    for e in ops:
        assert {"ph", "ts", "dur", "pid", "tid", "name", "args"} <= set(e) and e["ts"] >= 0 and e["dur"] >= 0
    product = next(e for e in ops if e["args"]["name"] == "product")
    assert product["name"] == "MatMul" and processes[product["pid"]] == CPU + "1 Compute"
    assert product["args"]["output_bytes"] == 64 * 64 * 4
    starts = [e for e in events if e["ph"] == "s"]
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == 2  # x to CPU:1 and the product back to CPU:0
    for start in starts:
        end = ends[start["id"]]
        assert start["pid"] != end["pid"] and end["ts"] >= start["ts"] and end["bp"] == "e"
    assert {s["name"] for s in starts} == {"_arg_x_0:0", "product:0"}


def test_timeline_flows_pair_each_iteration_of_a_loop_across_devices():
    def body(i, t):
        with tf.device("/cpu:1"):
            t = t + 1.5
        return i + 1, t

    with tf.device("/cpu:0"):
        _, total = tf.while_loop(lambda i, t: i < 5, body, [0, 0.0])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        value, meta = _traced(s, total, None)
    assert value == 7.5
    trace = _trace_json(meta, show_memory=True)
    flows = [e for e in trace["traceEvents"] if e["ph"] in ("s", "f")]
    assert len([e for e in flows if e["ph"] == "s"]) == len([e for e in flows if e["ph"] == "f"]) >= 6
    counters = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counters and all(e["args"]["bytes"] >= 0 for e in counters)
    assert not _trace_json(meta, show_dataflow=False)["traceEvents"] == trace["traceEvents"]


def test_label_parsing_matches_tf1():
    assert timeline.parse_label("a/b = MatMul(x, y:1, ^c)") == ("a/b", "MatMul", ["x", "y:1", "^c"])
    assert timeline.parse_label("s = _Send(t:0 @/device:CPU:1)") == ("s", "_Send", ["t:0 @/device:CPU:1"])
    assert timeline.parse_label("k = Const()") == ("k", "Const", [])


def test_traced_steps_feed_the_cost_model():
    x, y, z = _two_device_graph()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        _, meta = _traced(s, z, {x: np.ones((64, 64), np.float32)})
        stats = {n.node_name: n for d in meta.step_stats.dev_stats for n in d.node_stats}
        model = s._cost_model
        assert model.steps_observed == 1
        assert model.measured_seconds("product") == pytest.approx(stats["product"].op_end_rel_micros / 1e6)
        assert model.measured_seconds("product/_send_0_to_CPU_0") is None  # waiting is not work


def test_build_cost_model_reports_measured_costs_after_that_many_traced_steps():
    x, y, z = _two_device_graph()
    config = tf.ConfigProto(device_count={"CPU": 2}, graph_options=tf.GraphOptions(build_cost_model=2))
    feed = {x: np.ones((64, 64), np.float32)}
    with tf.Session(config=config) as s:
        _, first = _traced(s, z, feed)
        assert first.cost_graph is None
        _, second = _traced(s, z, feed)
    nodes = {n.name: n for n in second.cost_graph.node}
    product = nodes["product"]
    assert product.device == CPU + "1" and product.output_info[0]["size"] == 64 * 64 * 4
    assert product.output_info[0]["shape"] == [64, 64] and product.output_info[0]["dtype"] == "float32"
    measured = s._cost_model.measured_seconds("product")
    assert product.compute_cost == round(measured * 1e6)
    by_id = {n.id: n.name for n in second.cost_graph.node}
    assert any(by_id[i].startswith("product/_recv") for i, _ in nodes["total"].input_info)
