"""The suite's output: a plain-text table on stdout and one JSON file per run under bench-results/."""

import datetime
import json
import os


def _ms(value):
    return f"{value:10.4f}" if value < 1 else f"{value:10.3f}"


def table(rows, machine, label):
    lines = [f"== {label}", f"   {machine['cpu']}, {machine['cores']} cores; numpy {machine['numpy']} ({machine['blas']}); "
             f"pytorch {machine['pytorch'] or 'not installed'}",
             f"   {machine['tensorweave_native']}; OpenBLAS env {machine['openblas_env']}",
             f"{'case':34} {'implementation':14} {'median ms':>10} {'p10':>10} {'p90':>10} {'calls':>6} "
             f"{'vs numpy':>9} {'vs torch':>9}"]
    for row in rows:
        unit = "" if row["unit"] == "step" else f" per {row['unit']}"
        ratios = [f"{row[k]:8.2f}x" if k in row else f"{'':9}" for k in ("vs_numpy", "vs_pytorch")]
        lines.append(f"{row['case']:34} {row['implementation'] + unit:14} {_ms(row['median_ms'])} {_ms(row['p10_ms'])} "
                     f"{_ms(row['p90_ms'])} {row['calls']:6d} {' '.join(ratios)}")
    return "\n".join(lines)


def targets_table(results):
    lines = ["targets (issue 11):"]
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
