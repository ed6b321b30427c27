"""``python -m benchmarks``: run the suite, print the table and the targets, write JSON to bench-results/.

When OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE is set, the suite runs a second time in a child process with
both unset (OpenBLAS reads them once, when numpy loads), and reports both runs.
"""

import argparse
import os
import subprocess
import sys
import traceback

from benchmarks import discover, tf1
from benchmarks.common import Options, check_agreement, measure, summarize
from benchmarks.machine import OPENBLAS_VARIABLES, describe, load_tensorweave_first
from benchmarks.report import table, targets_table, write_json
from benchmarks.targets import evaluate


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="few rounds, short timings (a smoke test)")
    parser.add_argument("--rounds", type=int, default=None, help="round-robin rounds per case (default 7)")
    parser.add_argument("--out", default="bench-results", help="folder for the JSON results")
    parser.add_argument("--openblas", choices=("both", "as-is", "unset"), default="both",
                        help="run with the OpenBLAS variables as they are, unset, or both (default)")
    parser.add_argument("--tag", default="", help="suffix of the JSON file name")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    return parser.parse_args(argv)


def run_suite(args):
    load_tensorweave_first()
    benchmarks, failed = discover()
    if args.list:
        for name, benchmark in benchmarks.items():
            print(f"{name:16} {benchmark.title}")
        return 0
    options = Options()
    if args.quick:
        options = Options(rounds=2, min_seconds=0.03, warmup=2)
    if args.rounds:
        options.rounds = args.rounds
    unknown = set(args.names) - set(benchmarks)
    if unknown:
        print(f"unknown benchmarks {sorted(unknown)}; known: {sorted(benchmarks)}", file=sys.stderr)
        for name, error in failed:
            print(f"module {name} failed to import: {error}", file=sys.stderr)
        return 2
    machine = describe()
    rows, errors = [], [{"benchmark": name, "error": error} for name, error in failed]
    for name, benchmark in benchmarks.items():
        if args.names and name not in args.names:
            continue
        print(f"-- {name}: {benchmark.title}", flush=True)
        try:
            for case in benchmark.run(options):
                check_agreement(case)
                rows += summarize(case, measure(case, options))
        except Exception as e:
            traceback.print_exc()
            errors.append({"benchmark": name, "error": f"{type(e).__name__}: {e}"})
    machine["tf1"] = tf1.version()
    label = "OpenBLAS variables unset" if args.tag == "openblas-unset" else "OpenBLAS settings as they are"
    print(table(rows, machine, label))
    results = evaluate(rows)
    print(targets_table(results))
    for error in errors:
        print(f"FAILED {error['benchmark']}: {error['error']}")
    payload = {"label": label, "machine": machine, "rows": rows, "errors": errors,
               "targets": [{"target": t, "measured": m, "met": ok} for t, m, ok in results]}
    print(f"results: {write_json(args.out, args.tag, payload)}")
    return 1 if errors else 0


def _unset_run(argv):
    env = {k: v for k, v in os.environ.items() if k not in OPENBLAS_VARIABLES}
    child = [a for a in argv if not a.startswith("--openblas") and a not in ("both", "as-is", "unset")]
    return subprocess.run([sys.executable, "-m", "benchmarks", *child, "--openblas", "as-is", "--tag",
                           "openblas-unset"], env=env).returncode


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = _arguments(argv)
    if args.list:
        return run_suite(args)
    if args.openblas == "unset":
        return _unset_run(argv)
    status = run_suite(args)
    if args.openblas == "both":
        if any(k in os.environ for k in OPENBLAS_VARIABLES):
            status = max(status, _unset_run(argv))
        else:
            print(f"(no second run: {' and '.join(OPENBLAS_VARIABLES)} are not set here, so this run already has "
                  f"them unset)")
    return status


if __name__ == "__main__":
    sys.exit(main())
