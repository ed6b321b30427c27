"""The suite's output: a plain-text table on stdout and one JSON file per run under bench-results/."""

import datetime
import json
import os


def _time(row, key):
    """Milliseconds per step, or microseconds per op (the per-op rows)."""
    value = row[key]
    if row["unit"] != "step":
        return f"{value * 1e3:7.3f} us"
    return f"{value:7.3f} ms" if value < 100 else f"{value:7.1f} ms"


def table(rows, machine, label):
    lines = [f"== {label}", f"   {machine['cpu']}, {machine['cores']} cores; numpy {machine['numpy']} ({machine['blas']}, "
             f"{machine.get('blas_core') or '?'} kernels); "
             f"pytorch {machine['pytorch'] or 'not installed'}; tf1 {machine.get('tf1') or 'not run'}",
             f"   {machine['tensorweave_native']}; OpenBLAS env {machine['openblas_env']}",
             f"{'case':34} {'implementation':12} {'median':>10} {'p10':>10} {'p90':>10} {'calls':>6} "
             f"{'vs numpy':>9} {'vs torch':>9} {'vs tf1':>9}"]
    for row in rows:
        ratios = [f"{row[k]:8.2f}x" if k in row else f"{'':9}" for k in ("vs_numpy", "vs_pytorch", "vs_tf1")]
        lines.append(f"{row['case']:34} {row['implementation']:12} {_time(row, 'median_ms')} {_time(row, 'p10_ms')} "
                     f"{_time(row, 'p90_ms')} {row['calls']:6d} {' '.join(ratios)}")
    return "\n".join(lines)


def targets_table(results):
    lines = ["targets (issues 11 and 20):"]
    for target, measured, met in results:
        verdict = "n/a" if met is None else ("met" if met else "MISSED")
        lines.append(f"  {verdict:7} {target:52} measured {measured or '-'}")
    return "\n".join(lines)


def write_json(out_dir, tag, payload):
    os.makedirs(out_dir, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = os.path.join(out_dir, f"cpu-{stamp}{'-' + tag if tag else ''}.json")
    with open(path, "w") as f:
        json.dump(payload, f, indent=2)
    return path
