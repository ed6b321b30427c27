"""Which TF1 symbols that public programs use resolve on ``import tensorweave as tf``, by family.

Reads ``notes/tf1-api-usage.tsv`` (symbol, occurrences, files, repos, ..., contrib, kind), walks each
non-contrib public symbol's attribute path from ``tensorweave`` and prints, per family (the namespace
after ``tf.``; top-level names are their own family), how many resolve, weighted by symbols and by the
repositories that use them. ``--missing`` lists what does not resolve; ``--family`` keeps the named ones.

    .venv/bin/python tools/tf1_api_coverage.py [--tsv PATH] [--family gfile ...] [--missing]
"""

import argparse
import csv
import importlib
from collections import defaultdict
from pathlib import Path

# Namespaces counted together: tf.app.flags is tf.flags; tf.io.gfile is tf.gfile.
_FAMILY_OF_PREFIX = {"app.flags": "flags", "io.gfile": "gfile", "examples": "examples (mnist)"}


def find_tsv():
    """The usage table in ``shared/notes`` beside the repository (or above a worktree)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "notes" / "tf1-api-usage.tsv"
        if candidate.exists():
            return candidate
    raise SystemExit("tf1-api-usage.tsv not found in any shared/notes above this script: pass --tsv PATH")


def family(symbol, root=None):
    """``tf.nn.relu`` -> ``nn``; ``tf.app.flags.FLAGS`` -> ``flags``; ``tf.to_float`` and attributes of
    top-level classes and dtypes (``tf.GraphKeys.LOSSES``, ``tf.float16.max``) -> ``(top level)``."""
    path = symbol.split(".")[1:]
    for prefix, name in _FAMILY_OF_PREFIX.items():
        if ".".join(path[:prefix.count(".") + 1]) == prefix:
            return name
    head = getattr(root, path[0], None) if root is not None else None
    if len(path) > 1 and path[0][:1].islower() and type(head).__name__ != "DType":
        return path[0]
    return "(top level)"


def resolves(root, symbol):
    """Whether ``symbol`` (``tf.a.b.c``) resolves from ``root`` by attributes, as a program's chain would."""
    obj = root
    for part in symbol.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except Exception:  # a missing plugin namespace raises ImportError: that symbol does not resolve
            return False
    return True


def read_rows(tsv):
    with open(tsv, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [r for r in rows if r["contrib"] == "no" and r["kind"] == "public"]


def coverage(rows, root):
    """family -> {"symbols": n, "resolved": k, "repos": weight, "repos_resolved": weight, "missing": [...]}"""
    table = defaultdict(lambda: {"symbols": 0, "resolved": 0, "repos": 0, "repos_resolved": 0, "missing": []})
    for row in rows:
        entry = table[family(row["symbol"], root)]
        weight = int(row["repos"])
        entry["symbols"] += 1
        entry["repos"] += weight
        if resolves(root, row["symbol"]):
            entry["resolved"] += 1
            entry["repos_resolved"] += weight
        else:
            entry["missing"].append(row["symbol"])
    return dict(table)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tsv", type=Path, default=None)
    parser.add_argument("--family", action="append", default=[], help="only these families (repeatable)")
    parser.add_argument("--missing", action="store_true", help="list the symbols that do not resolve")
    args = parser.parse_args(argv)
    rows = read_rows(args.tsv or find_tsv())
    table = coverage(rows, importlib.import_module("tensorweave"))
    names = sorted(table, key=lambda f: (-table[f]["repos"], f))
    if args.family:
        names = [f for f in names if f in args.family]
    print(f"{'family':<20} {'symbols':>13} {'repo-weighted':>15}")
    total = defaultdict(int)
    for name in names:
        e = table[name]
        for key in ("symbols", "resolved", "repos", "repos_resolved"):
            total[key] += e[key]
        print(f"{name:<20} {e['resolved']:>5}/{e['symbols']:<5} {_pct(e['resolved'], e['symbols'])} "
              f"{_pct(e['repos_resolved'], e['repos'])}")
    print(f"{'all':<20} {total['resolved']:>5}/{total['symbols']:<5} {_pct(total['resolved'], total['symbols'])} "
          f"{_pct(total['repos_resolved'], total['repos'])}")
    if args.missing:
        for name in names:
            for symbol in table[name]["missing"]:
                print(f"missing  {name:<18} {symbol}")


def _pct(part, whole):
    return f"{100.0 * part / whole:5.1f}%" if whole else "    -"


if __name__ == "__main__":
    main()
