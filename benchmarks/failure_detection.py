"""How long the other ranks take to find a frozen rank (SIGSTOP: a hung process, or a host that vanished), with
given heartbeat settings. Not in the suite (one run with the defaults takes a minute); run it alone:

    python -m benchmarks.failure_detection                                   # defaults (1 s, 60 s)
    python -m benchmarks.failure_detection --interval 0.5 --timeout 5 --rounds 5

Each round is ``mpiexec -n 3 python -m mpi4py -m benchmarks.failure_detection --rank-job``: the ranks take
all-reduce steps; at step 20 rank 1 prints the time and stops itself; ranks 0 and 2 print the time their step
failed (UnavailableError from their own heartbeat check, or the abort of the rank that found it first). The
detection time is the later of the two minus the stop (one machine, one clock): when the whole job knows.
``--network`` runs the job over MPI's network path (MPIR_CVAR_NOLOCAL=1), as between hosts.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path


def rank_job(interval, timeout):
    import numpy as np

    import tensorweave as tf
    import tensorweave_distributed as twd

    settings = {}
    if interval:
        settings["heartbeat_interval"] = interval
    if timeout:
        settings["heartbeat_timeout"] = timeout
    twd.init(**settings)
    x = tf.placeholder(tf.float32, [4])
    y = twd.allreduce(x, name="gradients")
    with tf.Session() as sess:
        for step in range(1_000_000):
            if twd.rank() == 1 and step == 20:
                print(f"stopped at {time.time():.3f}", flush=True)
                os.kill(os.getpid(), 19)  # SIGSTOP
            try:
                sess.run(y, {x: np.ones(4, np.float32)})
            except tf.errors.OpError:  # UnavailableError, or the abort of the rank that found it first
                print(f"rank {twd.rank()} found it at {time.time():.3f}", flush=True)
                raise


def measure(interval, timeout, network):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    command = [str(mpiexec), "-n", "3", sys.executable, "-m", "mpi4py", "-m", "benchmarks.failure_detection",
               "--rank-job", "--interval", str(interval or 0), "--timeout", str(timeout or 0)]
    env = dict(os.environ, PYTHONUNBUFFERED="1", **({"MPIR_CVAR_NOLOCAL": "1"} if network else {}))
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=(timeout or 60) * 3 + 60,
                          cwd=Path(__file__).parents[1], start_new_session=True)
    stopped = re.search(r"stopped at ([\d.]+)", proc.stdout)
    found = [float(t) for t in re.findall(r"rank [02] found it at ([\d.]+)", proc.stdout)]
    if not stopped or len(found) != 2:
        raise RuntimeError(f"the job did not report a stop and two detections:\n{proc.stdout}\n{proc.stderr}")
    return max(found) - float(stopped.group(1))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=None, help="heartbeat_interval (default: the package's)")
    parser.add_argument("--timeout", type=float, default=None, help="heartbeat_timeout (default: the package's)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--network", action="store_true", help="over MPI's network path (MPIR_CVAR_NOLOCAL=1)")
    parser.add_argument("--rank-job", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rank_job:
        return rank_job(args.interval, args.timeout)
    times = []
    for _ in range(args.rounds):
        times.append(measure(args.interval, args.timeout, args.network))
        print(f"detected after {times[-1]:.2f} s", flush=True)
    print(f"heartbeat_interval {args.interval or 'default'}, heartbeat_timeout {args.timeout or 'default'}"
          f"{' (network path)' if args.network else ''}: {args.rounds} rounds, detection after "
          f"{min(times):.2f} to {max(times):.2f} s (median {statistics.median(times):.2f} s)")


if __name__ == "__main__":
    sys.exit(main())
