"""A tiny MPI job for tensorweave-run's tests (mpi4py only, so it starts fast). argv[1] says what rank 1 does:
``fail`` exits with status 3 on every attempt, ``kill-first`` SIGKILLs itself on the first attempt only,
``sleep`` waits (for a signal to stop the job)."""

import os
import signal
import sys
import time

from mpi4py import MPI

mode = sys.argv[1]
rank, size = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
attempt, limit = os.environ["TENSORWEAVE_RESTART"], os.environ["TENSORWEAVE_MAX_RESTARTS"]
print(f"rank {rank} of {size}: restart {attempt} of at most {limit}", flush=True)
MPI.COMM_WORLD.Barrier()
if rank == 1:
    if mode == "fail":
        sys.exit(3)
    if mode == "kill-first" and attempt == "0":
        os.kill(os.getpid(), signal.SIGKILL)
if mode == "sleep":
    print(f"rank {rank} sleeping", flush=True)
    time.sleep(120)
MPI.COMM_WORLD.Barrier()
print(f"rank {rank} done", flush=True)
