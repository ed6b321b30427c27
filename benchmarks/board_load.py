"""The dashboard with a big log: how long a run of 1,000,000 scalar points takes to write, to read into
the server, to serve as a chart (downsampled on the server) and to show in a real browser, both once the
server has read it and from cold (server start, or the run appearing under a running server, to the chart
of every point drawn).

    .venv/bin/python -m benchmarks.board_load [--points 1000000] [--rounds 5]

Prints a table and writes bench-results/board_load.json. The browser part needs Chromium
(/usr/bin/chromium) and playwright; without them it is skipped and says so. (A script, not a module of the
suite: it defines no BENCHMARK, and imports tensorweave_board only when run.)
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np

ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]


def _rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def write_big_run(run_dir, points):
    """A random walk of ``points`` steps under tag 'loss', framed exactly as FileWriter frames it."""
    from tensorweave_board import protos
    from tensorweave_board.record_io import RecordWriter
    os.makedirs(run_dir, exist_ok=True)
    values = np.random.default_rng(0).normal(size=points).cumsum()
    start = time.perf_counter()
    with open(os.path.join(run_dir, "events.out.tfevents.0000000000.bench"), "wb") as f:
        writer = RecordWriter(f)
        writer.write(protos.Event(wall_time=1.7e9, file_version="brain.Event:2").SerializeToString())
        for step, value in enumerate(values.tolist()):
            event = protos.Event(wall_time=1.7e9 + step * 0.01, step=step)
            event.summary.value.add(tag="loss", simple_value=value)
            writer.write(event.SerializeToString())
    return time.perf_counter() - start, values


def other_shapes(folder, rounds):
    """Ingest CPU seconds (median of ``rounds``) of files shaped otherwise: tags interleaved, scalars broken up
    by histograms, and histograms only (no run of equal records to vectorize)."""
    from tensorweave_board import protos
    from tensorweave_board.record_io import RecordWriter
    from tensorweave_board.server.logdir import Logdir
    rng = np.random.default_rng(1)

    def scalar(step, tag):
        event = protos.Event(wall_time=1.7e9 + step, step=step)
        event.summary.value.add(tag=tag, simple_value=float(step))
        return event

    def histogram(step):
        event = protos.Event(wall_time=1.7e9 + step, step=step)
        size = int(rng.integers(5, 60))
        event.summary.value.add(tag="w", histo=protos.HistogramProto(min=0, max=1, num=size, bucket_limit=range(
            size), bucket=[1.0] * size))
        return event

    shapes = {
        "300,000 points, three tags interleaved": (
            scalar(s, t) for s in range(100_000) for t in ("loss", "accuracy", "learning_rate")),
        "110,000 points and 1,000 histograms": (
            e for s in range(100_000) for e in [scalar(s, "loss")] + [scalar(s, "eval/acc")] * (s % 10 == 0)
            + [histogram(s)] * (s % 100 == 0)),
        "30,000 histograms of random sizes": (histogram(s) for s in range(30_000)),
    }
    out = {}
    for i, (name, events) in enumerate(shapes.items()):
        run = os.path.join(folder, f"shape{i}")
        os.makedirs(run)
        with open(os.path.join(run, "events.out.tfevents.0000000000.bench"), "wb") as f:
            writer = RecordWriter(f)
            for event in events:
                writer.write(event.SerializeToString())
        times = []
        for _ in range(rounds):
            start = time.process_time()
            Logdir(run).reload()
            times.append(time.process_time() - start)
        out[name] = statistics.median(times)
    return out


def file_writer_rate(folder, count=50_000):
    """Events per second through FileWriter.add_summary (serialize, queue, background write)."""
    from tensorweave_board import FileWriter, protos
    summary = protos.Summary()
    summary.value.add(tag="loss", simple_value=1.0)
    start = time.perf_counter()
    with FileWriter(folder, flush_secs=3600, max_queue=1000) as writer:
        for step in range(count):
            writer.add_summary(summary, step)
    return count / (time.perf_counter() - start)


def _get(url):
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as r:
        body = r.read()
    return time.perf_counter() - start, json.loads(body)


def _launch(p):
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    return p.chromium.launch(executable_path=chromium, headless=True, args=ARGS)


def _browser_missing():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    if not os.path.exists(shutil.which("chromium") or "/usr/bin/chromium"):
        return "Chromium is not installed (apt-get install -y chromium)"
    return ""


def _chart_drawn_at(page, run, points):
    """When (time.time()) the page drew the chart with all ``points`` of ``run``: the page's own clock, since
    Playwright notices a change only at its next poll."""
    page.locator(f'.card[data-tag="loss"] li[data-run="{run}"][data-total="{points}"]').wait_for(timeout=60000)
    return page.evaluate("performance.timeOrigin + window.__board.timings['loss'].at") / 1000


def _serve(logdir):
    """``tensorweave-board`` in its own process (as a user starts it); returns it and its URL once it listens."""
    proc = subprocess.Popen([sys.executable, "-m", "tensorweave_board.server.cli", "--logdir", logdir, "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    return proc, line.split(" at ")[1].split()[0]


def cold_loads(folder, points, rounds):
    """Seconds to the chart of every point drawn (1) from launching the server process, the page opened as
    soon as it listens, and (2) from the run's folder appearing (renamed in) under a running server whose
    page is open, at moments spread evenly over the server's 1 s reload cycle."""
    from playwright.sync_api import sync_playwright
    logs, watched = os.path.join(folder, "logs"), os.path.join(folder, "watched")
    started, appeared = [], []
    with sync_playwright() as p:
        browser = _launch(p)
        for i, cold in enumerate([True] * rounds + [False] * rounds):
            os.makedirs(watched, exist_ok=True)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            start = time.time()
            proc, url = _serve(logs if cold else watched)
            page.goto(url)
            if not cold:
                page.locator("#status", has_text="0 runs").wait_for(timeout=60000)
                time.sleep(((i - rounds) + 0.5) / rounds)
                start = time.time()
                os.rename(os.path.join(logs, "big"), os.path.join(watched, "big"))
            (started if cold else appeared).append(_chart_drawn_at(page, "big", points) - start)
            page.close()
            proc.terminate()
            proc.wait(timeout=30)
            if not cold:
                os.rename(os.path.join(watched, "big"), os.path.join(logs, "big"))
        browser.close()
    return started, appeared


def browser_loads(url, points, rounds):
    """Seconds from navigation to the 1M-point chart drawn (fresh page each round), and the page's own
    fetch-and-draw time."""
    from playwright.sync_api import sync_playwright
    results = []
    with sync_playwright() as p:
        browser = _launch(p)
        for _ in range(rounds):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            start = time.time()
            page.goto(url)
            wall = _chart_drawn_at(page, "big", points) - start
            timing = page.evaluate("window.__board.timings['loss']")
            total = page.locator('.card[data-tag="loss"] li').first.get_attribute("data-total")
            results.append({"seconds": wall, "page_fetch_draw_ms": timing["fetchedAndDrawnMs"],
                            "drawn_at_ms": timing["at"], "points": int(total)})
            page.close()
        browser.close()
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.board_load", description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="bench-results")
    args = parser.parse_args(argv)
    from tensorweave_board.server.logdir import Logdir
    from tensorweave_board.server.web import BoardServer
    folder = tempfile.mkdtemp(prefix="board-bench-")
    report = {"points": args.points}
    try:
        report["write_seconds"], values = write_big_run(os.path.join(folder, "logs", "big"), args.points)
        report["file_writer_events_per_second"] = file_writer_rate(os.path.join(folder, "writer"))
        ingest, ingest_cpu = [], []
        for _ in range(args.rounds):
            rss = _rss_mb()
            logdir = Logdir(os.path.join(folder, "logs"))
            start, cpu = time.perf_counter(), time.process_time()
            logdir.reload()
            ingest.append(time.perf_counter() - start)
            ingest_cpu.append(time.process_time() - cpu)
            report.setdefault("ingest_rss_mb", _rss_mb() - rss)  # the first round: later ones reuse freed memory
            steps, walls, stored = logdir.runs["big"].scalars["loss"].arrays()
            assert np.array_equal(steps, np.arange(args.points)) and np.array_equal(stored, values.astype(np.float32))
        report["ingest_seconds"] = statistics.median(ingest)
        report["ingest_cpu_seconds"] = statistics.median(ingest_cpu)  # this process's CPU: less noisy when shared
        report["other_shapes_ingest_cpu_seconds"] = other_shapes(os.path.join(folder, "shapes"), args.rounds)
        server = BoardServer(logdir, "127.0.0.1", 0)
        server.start()
        base = f"{server.url}api/scalars?run=big&tag=loss&buckets=1000"
        cold, data = _get(base + "&smoothing=0.6")
        report["api_first_request_seconds"] = cold
        report["api_points_sent"] = data["shown"]
        stored = values.astype(np.float32)  # simple_value is a float32
        assert data["total"] == args.points
        assert max(data["value"]) == stored.max() and min(data["value"]) == stored.min()
        for name, query in [("full", "&smoothing=0.6"), ("zoomed", "&smoothing=0.6&min=400000&max=401000"),
                            ("relative_axis", "&x=relative&smoothing=0.6")]:
            times = [_get(base + query)[0] for _ in range(args.rounds)]
            report[f"api_{name}_median_seconds"] = statistics.median(times)
        why = _browser_missing()
        browser = None if why else browser_loads(server.url, args.points, args.rounds)
        report["browser"] = browser or why
        server.shutdown()
        server.server_close()
        if not why:
            report["cold_server_start_seconds"], report["cold_new_run_seconds"] = cold_loads(
                folder, args.points, args.rounds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"scalar points in one run:                 {args.points:,}")
    print(f"write the event file (framing + protos):  {report['write_seconds']:.2f} s")
    print(f"FileWriter.add_summary throughput:        {report['file_writer_events_per_second']:,.0f} events/s")
    print(f"server reads it all (ingest):             {report['ingest_seconds']:.2f} s (median of {args.rounds}; "
          f"CPU {report['ingest_cpu_seconds']:.2f} s), +{report['ingest_rss_mb']:.0f} MB resident")
    for name, seconds in report["other_shapes_ingest_cpu_seconds"].items():
        print(f"  ingest CPU, {name + ':':40} {seconds:.3f} s")
    print(f"first chart request (EMA over all points): {report['api_first_request_seconds'] * 1000:.0f} ms, "
          f"{report['api_points_sent']:,} points sent")
    for name in ("full", "zoomed", "relative_axis"):
        print(f"chart request, {name:14}            {report[f'api_{name}_median_seconds'] * 1000:.1f} ms (median)")
    if isinstance(browser, list):
        seconds = statistics.median(b["seconds"] for b in browser)
        page_ms = statistics.median(b["page_fetch_draw_ms"] for b in browser)
        print(f"browser: page load to chart drawn:        {seconds:.2f} s (median of {len(browser)}; the page's "
              f"fetch + draw {page_ms:.0f} ms)")
        for key, what in (("cold_server_start_seconds", "tensorweave-board launched"),
                          ("cold_new_run_seconds", "the run appears under it")):
            times = report[key]
            print(f"cold: {what + ' -> chart drawn:':36} {statistics.median(times):.2f} s (median of "
                  f"{len(times)}, {min(times):.2f}-{max(times):.2f})")
    else:
        print(f"browser: skipped ({report['browser']})")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "board_load.json"), "w") as f:
        json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
