"""``tensorweave-run -n 4 [--restarts 3] -- python train.py ...``: runs an MPI job under mpiexec and starts it
again when a rank fails, so a ``MonitoredTrainingSession`` job resumes from the chief's latest checkpoint.

A job is restarted whole (like torchrun's ``--max-restarts``): MPI cannot replace one rank of a running world.
Each attempt sees ``TENSORWEAVE_RESTART`` (0 on the first) and ``TENSORWEAVE_MAX_RESTARTS``. A ``python`` command
runs as ``python -m mpi4py`` so that an exception on one rank aborts all of them instead of leaving a hang.
"""

import argparse
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

PROG = "tensorweave-run"
RESTART_ENV, MAX_RESTARTS_ENV = "TENSORWEAVE_RESTART", "TENSORWEAVE_MAX_RESTARTS"
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?$")
_PYTHON_OPTIONS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description=(
        "Run an MPI job with mpiexec and restart it when a rank fails (killed, crashed, or raised). With "
        "tf.train.MonitoredTrainingSession(checkpoint_dir=...) a restarted job resumes from the chief's latest "
        "checkpoint. The job sees TENSORWEAVE_RESTART=<restarts so far>."),
        usage=f"{PROG} -n RANKS [--restarts K] [--restart-delay S] [--mpiexec PATH] -- COMMAND [ARGS...]")
    parser.add_argument("-n", "-np", "--np", dest="ranks", type=int, required=True, metavar="RANKS",
                        help="number of processes (MPI ranks) to start")
    parser.add_argument("--restarts", "--max-restarts", type=int, default=0, metavar="K",
                        help="restart the whole job up to K times after a failure (default 0: never)")
    parser.add_argument("--restart-delay", type=float, default=1.0, metavar="S",
                        help="seconds to wait before a restart, so the failed ranks' resources are freed (default 1)")
    parser.add_argument("--mpiexec", metavar="PATH",
                        help="the mpiexec to use (default: the one next to this Python, else the first on PATH)")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the program each rank runs, after '--' (e.g. -- python train.py --lr 0.1)")
    args = parser.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        parser.error("no command to run: put it after '--', e.g. tensorweave-run -n 4 -- python train.py")
    if args.ranks < 1:
        parser.error(f"-n must be at least 1 (the number of ranks to start), got {args.ranks}")
    if args.restarts < 0:
        parser.error(f"--restarts must be 0 or more (how often to restart after a failure), got {args.restarts}")
    if args.restart_delay < 0:
        parser.error(f"--restart-delay must be 0 or more seconds, got {args.restart_delay}")
    return args


def find_mpiexec(explicit=None):
    """The mpiexec to run: ``explicit``, else the one the mpich wheel put next to this Python, else PATH's."""
    if explicit:
        path = shutil.which(explicit)
        if path is None:
            raise FileNotFoundError(f"--mpiexec {explicit!r} is not an executable file; give the path of mpiexec")
        return path
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError(f"no mpiexec next to {sys.executable} or on PATH: install one with "
                                f"pip install 'tensorweave-distributed[mpich]', or pass --mpiexec PATH")
    return found


def job_command(mpiexec, ranks, command):
    """The mpiexec command line; a Python command gets ``-m mpi4py`` (unless it has it) and this interpreter
    in place of a bare ``python``, whose environment has mpi4py and tensorweave."""
    command = list(command)
    if not _PYTHON.match(os.path.basename(command[0])) and os.path.realpath(command[0]) != os.path.realpath(
            sys.executable):
        return [mpiexec, "-n", str(ranks), *command]
    if os.sep not in command[0]:
        command[0] = sys.executable
    i = 1
    while i < len(command) and command[i].startswith("-") and command[i] not in ("-m", "-c", "-"):
        i += 2 if command[i] in _PYTHON_OPTIONS_WITH_VALUE else 1
    if command[i:i + 2] != ["-m", "mpi4py"]:
        command[i:i] = ["-m", "mpi4py"]
    return [mpiexec, "-n", str(ranks), *command]


def describe_status(status):
    """Why a job ended, in words. mpiexec (hydra) exits with N both for a rank killed by signal N and for a
    rank that exited with N, so a status that is a fatal signal's number names both."""
    if status < 0:
        return f"mpiexec was killed by {_signal_name(-status)}"
    for number in (status, status - 128):
        if number in _FATAL_SIGNALS:
            return f"exit status {status} (a rank was killed by {_signal_name(number)}, or exited with {status})"
    return f"exit status {status}"


_FATAL_SIGNALS = {signal.SIGKILL, signal.SIGSEGV, signal.SIGTERM, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE,
                  signal.SIGILL}


def _signal_name(number):
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


class Launcher:
    """Runs the job, restarting it after failures; SIGINT/SIGTERM go to mpiexec and stop the restarts."""

    def __init__(self, command, restarts=0, restart_delay=1.0, env=None, out=None):
        self.command, self.restarts, self.restart_delay = command, restarts, restart_delay
        self.env = dict(os.environ if env is None else env)
        self.out = out or sys.stderr
        self.interrupted = None
        self._proc = None

    def say(self, message):
        print(f"{PROG}: {message}", file=self.out, flush=True)

    def run(self):
        """The job's final exit status (0 when an attempt succeeded)."""
        with _forwarding_signals(self._on_signal):
            attempt = 0
            while True:
                status = self._attempt(attempt)
                if status is not None:
                    return status
                attempt += 1

    def _attempt(self, attempt):
        """Runs attempt ``attempt`` (0 first); its final status, or None to restart."""
        attempts = self.restarts + 1
        self.say(f"attempt {attempt + 1} of {attempts}: {shlex.join(self.command)}")
        status = self._run_once(attempt)
        if status == 0:
            restarts = f" ({attempt} restart{'s' * (attempt != 1)})" if attempt else ""
            self.say(f"the job finished on attempt {attempt + 1} of {attempts}{restarts}")
            return 0
        if self.interrupted:
            self.say(f"stopped by {self.interrupted.name} ({describe_status(status)}); not restarting")
            return status if status > 0 else 128 + self.interrupted
        failed = f"attempt {attempt + 1} of {attempts} failed: {describe_status(status)}"
        if attempt == self.restarts:
            self.say(f"{failed}; no restarts left (--restarts {self.restarts}), giving up")
            return status if status > 0 else 128 - status
        left = self.restarts - attempt
        self.say(f"{failed}; restarting the job in {self.restart_delay:g} s ({left} restart{'s' * (left != 1)} "
                 f"left, {RESTART_ENV}={attempt + 1})")
        deadline = time.monotonic() + self.restart_delay
        while not self.interrupted and time.monotonic() < deadline:
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        if self.interrupted:
            self.say(f"stopped by {self.interrupted.name} before the restart")
            return 128 + self.interrupted
        return None

    def _run_once(self, attempt):
        env = dict(self.env, **{RESTART_ENV: str(attempt), MAX_RESTARTS_ENV: str(self.restarts)})
        self._proc = subprocess.Popen(self.command, env=env)
        if self.interrupted:  # the signal came while the job was starting
            self._proc.send_signal(self.interrupted)
        try:
            return self._proc.wait()
        finally:
            self._proc = None

    def _on_signal(self, signum, frame):
        self.interrupted = signal.Signals(signum)
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signum)  # hydra passes it to the ranks and ends the job


@contextlib.contextmanager
def _forwarding_signals(handler):
    """``handler`` answers SIGINT and SIGTERM while the job runs (main thread only)."""
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def main(argv=None):
    args = parse_args(argv)
    try:
        mpiexec = find_mpiexec(args.mpiexec)
    except FileNotFoundError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    return Launcher(job_command(mpiexec, args.ranks, args.command), args.restarts, args.restart_delay).run()


if __name__ == "__main__":
    sys.exit(main())
