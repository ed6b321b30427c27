"""All-reduce over MPI: bus bandwidth of our algorithms against mpi4py's buffer Allreduce, and tensor fusion.

The suite launches ``mpiexec -n N python -m mpi4py -m benchmarks.allreduce --worker`` for 2 and 4 ranks
(the venv's mpiexec, this interpreter); each job times every implementation in the same run, round-robin
(so load elsewhere hits them alike), the slowest rank's time per call counting, and hands the per-call
times back to the suite. Implementations, all on float32 sums:

- ``mpi4py``: ``comm.Allreduce(x, out)``, MPI's own (the reference);
- ``ring``, ``recursive_doubling``, ``native``: our algorithms on a preallocated buffer (x copied in first,
  as MPI copies x into out), driven on the calling thread;
- ``tw op (auto)``: the full collective path ops use (negotiation with rank 0, the MPI thread, a fresh result).

Bus bandwidth is nccl-tests' busbw: bytes / time x 2(N-1)/N. Fusion: 100 tensors of 1/100 the size in one
collective (one negotiation, one fused buffer) against one tensor of their total size, and the 100 one by one.

    python -m benchmarks allreduce          # in the suite
    python -m benchmarks.allreduce          # alone: the bandwidth table and the targets
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import Benchmark, Case

SIZES = ("1M", "16M", "64M")
RANKS = (2, 4)
FUSED_TENSORS = 100
FUSED_TOTAL_BYTES = 1 << 20
IMPLEMENTATIONS = ("mpi4py", "ring", "recursive_doubling", "native", "tw op (auto)")


# ---- inside the MPI job ----------------------------------------------------------------------------------
def _timed(comm, fn, calls):
    """Seconds per call on the slowest rank, for ``calls`` calls between barriers."""
    from mpi4py import MPI
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    return comm.allreduce(elapsed, op=MPI.MAX) / calls


def _round_robin(comm, steps, rounds, min_seconds):
    for fn in steps.values():  # warm up (and fault in every buffer)
        fn()
        fn()
    calls = {}
    for name, fn in steps.items():
        once = _timed(comm, fn, 1)
        calls[name] = int(comm.bcast(max(2, min(200, min_seconds / max(once, 1e-6))), root=0))
    times = {name: [] for name in steps}
    for _ in range(rounds):
        for name, fn in steps.items():
            times[name].append(_timed(comm, fn, calls[name]))
    return times


def _algorithm_steps(comm, x, scratch_comm):
    from tensorweave_distributed import algorithms
    from tensorweave_distributed.reduction import mpi_op, reducer

    out, buf, scratch = np.empty_like(x), np.empty_like(x), algorithms.Scratch()
    combine, op = reducer("sum", x.dtype), mpi_op("sum", x.dtype)

    def ours(algorithm):
        def step():
            np.copyto(buf, x)
            algorithms.run_blocking(algorithms.allreduce(algorithm, scratch_comm, buf, combine, op, scratch), 120)
            return buf
        return step

    steps = {"mpi4py": lambda: comm.Allreduce(x, out) or out}
    steps.update({name: ours(name) for name in ("ring", "recursive_doubling", "native")})
    return steps


def worker(args):
    from mpi4py import MPI

    import tensorweave_distributed as twd
    from tensorweave_distributed import eager

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    assert size == args.ranks, f"launched for {args.ranks} ranks, but MPI says {size}"
    algorithm_comm = comm.Dup()
    results = {"ranks": size, "cases": []}
    counter = iter(range(1 << 30))
    twd.init()
    for size_name in args.sizes:
        x = np.random.default_rng(rank).standard_normal(parse_size(size_name) // 4).astype(np.float32)
        steps = _algorithm_steps(comm, x, algorithm_comm)
        steps["tw op (auto)"] = lambda: eager.allreduce(x, f"bench/{next(counter)}", timeout=120)
        check = {name: fn()[:4].tolist() for name, fn in steps.items()}
        times = _round_robin(comm, steps, args.rounds, args.min_seconds)
        results["cases"].append({"name": f"all-reduce {show_size(x.nbytes)}, {size} ranks", "bytes": x.nbytes,
                                 "times": times, "check": check})
    pieces = [np.random.default_rng(rank + i).standard_normal(FUSED_TOTAL_BYTES // 4 // FUSED_TENSORS)
              .astype(np.float32) for i in range(FUSED_TENSORS)]
    whole = np.concatenate(pieces)
    fusion = {
        "one tensor": lambda: eager.allreduce(whole, f"bench/{next(counter)}", timeout=120),
        "100 fused": lambda: eager.run("allreduce", pieces, f"bench/{next(counter)}", timeout=120),
        "100 one by one": lambda: [eager.allreduce(p, f"bench/{next(counter)}", timeout=120) for p in pieces],
    }
    check = {"one tensor": fusion["one tensor"]()[:4].tolist(),
             "100 fused": np.concatenate(fusion["100 fused"]())[:4].tolist(),
             "100 one by one": np.concatenate(fusion["100 one by one"]())[:4].tolist()}
    results["cases"].append({"name": f"fusion: {FUSED_TENSORS} x {FUSED_TOTAL_BYTES // FUSED_TENSORS // 1024} KiB, "
                                     f"{size} ranks", "bytes": whole.nbytes, "check": check,
                             "times": _round_robin(comm, fusion, args.rounds, args.min_seconds)})
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(results, f)


# ---- in the suite ----------------------------------------------------------------------------------------
def parse_size(text):
    """"64K", "16M", "1G" or a number of bytes."""
    text = str(text).strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def show_size(nbytes):
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def launch(ranks, rounds, min_seconds, sizes=SIZES, timeout=900):
    """Runs the MPI job on ``ranks`` ranks and returns its results."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "allreduce.json")
        command = [str(mpiexec), "-n", str(ranks), sys.executable, "-m", "mpi4py", "-m", "benchmarks.allreduce",
                   "--worker", "--ranks", str(ranks), "--rounds", str(rounds), "--min-seconds", str(min_seconds),
                   "--out", out, "--sizes", *map(str, sizes)]
        proc = subprocess.run(command, cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        with open(out) as f:
            return json.load(f)


def bus_bandwidth(nbytes, seconds, ranks):
    """nccl-tests' busbw in GB/s: what each rank's link carries, comparable across rank counts."""
    return nbytes / seconds * 2 * (ranks - 1) / ranks / 1e9


def report(results):
    """Lines: bus bandwidth per implementation and size, the ratios to mpi4py, the fusion costs, the targets."""
    lines, targets = [], []
    for job in results:
        ranks = job["ranks"]
        for case in job["cases"]:
            medians = {name: float(np.median(t)) for name, t in case["times"].items()}
            if case["name"].startswith("fusion"):
                one = medians["one tensor"]
                lines.append(f"  {case['name']}: one tensor {one * 1e3:.2f} ms, 100 fused {medians['100 fused'] * 1e3:.2f} "
                             f"ms ({medians['100 fused'] / one:.2f}x), 100 one by one "
                             f"{medians['100 one by one'] * 1e3:.1f} ms ({medians['100 one by one'] / one:.1f}x)")
                targets.append((f"fusion, {ranks} ranks: 100 small tensors < 2x one tensor of their size",
                                medians["100 fused"] / one, medians["100 fused"] / one < 2))
                continue
            reference = medians["mpi4py"]
            cells = ", ".join(f"{name} {bus_bandwidth(case['bytes'], t, ranks):.2f} GB/s ({reference / t:.2f}x)"
                              for name, t in medians.items())
            lines.append(f"  {case['name']}: {cells}")
            if case["bytes"] >= 16 << 20:
                ratio = reference / medians["ring"]
                targets.append((f"ring >= 0.9x mpi4py, {case['name']}", ratio, ratio >= 0.9))
    lines.append("targets (issue 7):")
    for target, value, met in targets:
        lines.append(f"  {'met' if met else 'MISSED':7} {target:60} measured {value:.2f}x")
    return lines


def run(options):
    quick = options.rounds <= 2
    sizes = ("1M", "16M") if quick else SIZES
    results = [launch(ranks, options.rounds, min(options.min_seconds, 0.5), sizes) for ranks in RANKS]
    print("\n".join(report(results)), flush=True)
    cases = []
    for job in results:
        for case in job["cases"]:
            cases.append(Case(case["name"], steps={name: None for name in case["times"]}, unit="call",
                              check=case["check"], check_rtol=1e-3, times=case["times"]))
    return cases


BENCHMARK = Benchmark("allreduce", "all-reduce bus bandwidth over MPI (2 and 4 ranks) and tensor fusion", run)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.allreduce", description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ranks", type=int, nargs="+", default=list(RANKS))
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), help="message sizes (1M 16M 64M; K and M suffixes)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-seconds", type=float, default=0.3, help="per implementation per round")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.worker:
        args.ranks = args.ranks[0]
        return worker(args)
    results = [launch(ranks, args.rounds, args.min_seconds, args.sizes) for ranks in args.ranks]
    print("\n".join(report(results)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
