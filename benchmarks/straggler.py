"""Stragglers and backup workers (the OSDI paper's Figure 8, at small scale): step time of synchronous training.

The suite launches ``mpiexec -n W+1 python -m mpi4py -m benchmarks.straggler --worker`` jobs: one ps task and
W workers training a tiny softmax layer with tf.train.SyncReplicasOptimizer, replicas_to_aggregate = W - B of
total_num_replicas = W for B = 0, 1, 2 backup workers. The workers' compute is small, so the step time is the
synchronization. A seeded schedule makes one random worker a straggler in some steps: at each global step,
with probability ``p``, one worker (uniformly drawn) sleeps an exponentially distributed time before computing
its gradient for that step; every configuration meets the same schedule. Each B also runs without stragglers
(p = 0), the baseline its straggler cost is measured against (fewer gradients per step make a step shorter
by themselves), and the configurations alternate, round after round, so load elsewhere on the machine hits
them alike.

The step time is the time between global-step increments: each worker stamps the global step its token
carries (the step just applied) when it is released, and an increment's time is the first stamp of it.

    python -m benchmarks straggler          # in the suite
    python -m benchmarks.straggler          # alone: the table and the reading
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

WORKERS = 3
STEPS = 120  # global steps per job
WARMUP = 10  # global steps left out of the times (workers still joining)
PROBABILITY = 0.25  # of a straggler at a step
MEAN_DELAY = 0.15  # seconds, exponentially distributed
BACKUPS = (0, 1, 2)


def straggler(seed, step, workers, probability, mean_delay):
    """(worker task, seconds) that straggles at global ``step``, or None: the same answer in every process."""
    rng = np.random.default_rng([seed, step])
    if rng.random() >= probability:
        return None
    return int(rng.integers(workers)), float(rng.exponential(mean_delay))


def increment_times(stamps):
    """{global step: time it was first seen} from (step, time) stamps; a stamp of step g also shows g-1, g-2..."""
    first = {}
    for step, stamp in sorted(stamps, key=lambda s: s[1]):
        for g in range(int(step), -1, -1):
            if g in first:
                break
            first[g] = stamp
    return first


def step_times(stamps, warmup, last_step):
    """Seconds between consecutive global-step increments from ``warmup`` to ``last_step``."""
    first = increment_times(stamps)
    missing = [g for g in range(warmup, last_step + 1) if g not in first]
    if missing:
        raise ValueError(f"no worker saw global steps {missing[:5]}...; the job ended before step {last_step}")
    times = np.array([first[g] for g in range(warmup, last_step + 1)])
    return np.diff(times)


# ---- inside the MPI job ----------------------------------------------------------------------------------
def worker(args):
    """One job: rank 0 is the ps; worker tasks train, sleep when the schedule says, and write their stamps."""
    import tensorweave as tf
    import tensorweave_distributed as twd

    twd.init()
    rank, size = twd.rank(), twd.size()
    if size != args.workers + 1:
        raise SystemExit(f"benchmarks.straggler --worker: launched on {size} ranks, expected 1 ps + {args.workers} "
                         f"workers = {args.workers + 1}")
    cluster = tf.train.ClusterSpec.from_mpi(num_ps=1)
    job, task = ("ps", 0) if rank == 0 else ("worker", rank - 1)
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    if job == "ps":
        server.join()
        return
    rng = np.random.default_rng([args.seed, task])
    xs, ys = rng.standard_normal((16, 16)).astype(np.float32), rng.integers(0, 4, 16)
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{task}")):
        x, y = tf.constant(xs), tf.constant(ys, tf.int64)
        logits = tf.layers.dense(x, 4, name="softmax")
        loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                             replicas_to_aggregate=args.aggregate, total_num_replicas=args.workers)
        train_op = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
        joined = tf.Variable(0, trainable=False, name="workers_joined")
        join = joined.assign_add(1)
    hooks = [opt.make_session_run_hook(task == 0), tf.train.StopAtStepHook(last_step=args.steps)]
    stamps, slept, local_step = [], {}, 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=task == 0, hooks=hooks,
                                           log_step_count_steps=0, save_summaries_steps=None) as sess:
        sess.run(join)  # all workers start together: the first ones would otherwise make every step alone
        while sess.run(joined) < args.workers:
            time.sleep(0.01)
        while not sess.should_stop():
            late = straggler(args.seed, local_step, args.workers, args.probability, args.mean_delay)
            if late is not None and late[0] == task and local_step not in slept:
                slept[local_step] = late[1]
                time.sleep(late[1])
            local_step = int(sess.run(train_op))  # the global step this worker's token carries
            stamps.append((local_step, time.time()))
            if local_step >= args.steps:
                break
    with open(f"{args.out}.{task}", "w") as f:
        json.dump({"stamps": stamps, "slept": slept}, f)


# ---- in the suite ----------------------------------------------------------------------------------------
def configurations(workers, probability):
    """(name, backup workers, straggler probability): each backup count with and without stragglers."""
    return [(f"{b} backup, {label}", b, p) for b in BACKUPS if b < workers
            for label, p in (("no straggler", 0.0), ("stragglers", probability))]


def launch(workers, aggregate, probability, steps, mean_delay, seed, timeout=300):
    """Runs one job; returns its step times (s) and the seconds its stragglers slept."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "stamps")
        command = [str(mpiexec), "-n", str(workers + 1), sys.executable, "-m", "mpi4py", "-m", "benchmarks.straggler",
                   "--worker", "--workers", str(workers), "--aggregate", str(aggregate), "--steps", str(steps),
                   "--probability", str(probability), "--mean-delay", str(mean_delay), "--seed", str(seed),
                   "--out", out]
        proc = subprocess.run(command, cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        stamps, slept = [], 0.0
        for task in range(workers):
            with open(f"{out}.{task}") as f:
                record = json.load(f)
            stamps += record["stamps"]
            slept += sum(record["slept"].values())
    return {"times": step_times(stamps, min(WARMUP, steps // 4), steps).tolist(), "slept": slept}


def measure(workers=WORKERS, steps=STEPS, rounds=2, probability=PROBABILITY, mean_delay=MEAN_DELAY, seed=0):
    """{configuration: {"times": step times over all rounds, "slept": straggler sleep, "aggregate": m}}; round r
    uses seed ``seed + r`` in every configuration, which alternate, so all meet the same schedule and load."""
    results = {name: {"times": [], "slept": 0.0, "aggregate": workers - b}
               for name, b, _ in configurations(workers, probability)}
    for r in range(rounds):
        for name, b, p in configurations(workers, probability):
            job = launch(workers, workers - b, p, steps, mean_delay, seed + r)
            results[name]["times"] += job["times"]
            results[name]["slept"] += job["slept"]
    return results


def report(results, workers, steps, rounds, probability, mean_delay):
    """Lines: median, p90 and mean step time per configuration, and what the stragglers cost each backup count."""
    lines = [f"  1 ps + {workers} workers, {rounds} x {steps} global steps per configuration; at each step, with "
             f"p = {probability}, one worker sleeps Exp(mean {mean_delay * 1e3:.0f} ms)",
             f"  {'configuration':26} {'aggregate':>9} {'median':>9} {'p90':>9} {'mean':>9} {'slept':>7} "
             f"{'straggler cost':>15}"]
    for name, result in results.items():
        t = np.asarray(result["times"]) * 1e3
        calm = results.get(name.replace("stragglers", "no straggler"))
        cost = f"{np.mean(t) / np.mean(calm['times']) / 1e3:14.2f}x" if name.endswith("stragglers") and calm else ""
        aggregate = f"{result['aggregate']}/{workers}"
        lines.append(f"  {name:26} {aggregate:>9} {np.median(t):7.1f}ms "
                     f"{np.percentile(t, 90):7.1f}ms {np.mean(t):7.1f}ms {result['slept']:6.1f}s {cost}")
    return lines


def run(options):
    quick = options.rounds <= 2
    steps, rounds = (40, 1) if quick else (STEPS, min(options.rounds, 3))
    results = measure(WORKERS, steps, rounds)
    print("\n".join(report(results, WORKERS, steps, rounds, PROBABILITY, MEAN_DELAY)), flush=True)
    return [Case(f"straggler: 1 ps + {WORKERS} workers", steps={name: None for name in results}, unit="step",
                 times={name: r["times"] for name, r in results.items()})]


BENCHMARK = Benchmark("straggler", "sync replicas under stragglers with 0, 1, 2 backup workers (Figure 8)", run)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.straggler", description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--aggregate", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=WORKERS, help=f"worker tasks ({WORKERS})")
    parser.add_argument("--steps", type=int, default=STEPS, help=f"global steps per job ({STEPS})")
    parser.add_argument("--rounds", type=int, default=3, help="jobs per configuration, alternating (3)")
    parser.add_argument("--probability", type=float, default=PROBABILITY, help="of a straggler at a step")
    parser.add_argument("--mean-delay", type=float, default=MEAN_DELAY, help="a straggler's mean sleep, seconds")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    results = measure(args.workers, args.steps, args.rounds, args.probability, args.mean_delay, args.seed)
    print("\n".join(report(results, args.workers, args.steps, args.rounds, args.probability, args.mean_delay)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
