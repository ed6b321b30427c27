"""The MPI world of this process: ``init()``, ranks, the communicators, failure and shutdown.

``init()`` is collective (every rank calls it, in the same order as any other collective call). It
duplicates the user's communicator three times (control messages, collectives, Send/Recv) so that our
traffic never matches the user's own mpi4py messages, and starts the progress engine.

When a peer fails, every pending and later operation fails with the error that names it, and the process
ends with a non-zero status when it exits (MPI_Abort, so mpiexec takes the whole job down instead of
waiting in MPI_Finalize for a rank that is gone). An uncaught exception in a rank launched without
``-m mpi4py`` tells the others why before the process aborts.

A clean shutdown (``shutdown()``, or the process exiting) leaves nothing in flight for MPI_Finalize: the rank
finishes its collectives and sends, says goodbye on the control and Send/Recv communicators, receives until
every other rank's last message on both has arrived (their answer to the goodbye, or their own), then cancels
whatever is still posted and drops unreceived messages (a peer that never answered within the timeout).
"""

import atexit
import logging
import random
import signal
import sys
import threading
import time

from tensorweave import errors

_log = logging.getLogger("tensorweave_distributed")

_world = None
_lock = threading.Lock()


class World:
    def __init__(self, comm, settings):
        from mpi4py import MPI

        from tensorweave_distributed.control import Control
        from tensorweave_distributed.controller import Controller
        from tensorweave_distributed.engine import Engine
        from tensorweave_distributed.transport import Transport

        provided = MPI.Query_thread()
        if provided < MPI.THREAD_SERIALIZED:
            names = {MPI.THREAD_SINGLE: "MPI_THREAD_SINGLE", MPI.THREAD_FUNNELED: "MPI_THREAD_FUNNELED"}
            raise RuntimeError(f"the MPI library provides {names.get(provided, provided)}, but tensorweave_distributed "
                               f"makes MPI calls from its own thread and needs MPI_THREAD_SERIALIZED or better. Do not "
                               f"set mpi4py.rc.thread_level lower than 'serialized'.")
        self.settings = settings
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.ctrl, self.coll, self.p2p = comm.Dup(), comm.Dup(), comm.Dup()
        local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank, self.local_size = local.Get_rank(), local.Get_size()
        cross = comm.Split(self.local_rank, self.rank)
        self.cross_rank, self.cross_size = cross.Get_rank(), cross.Get_size()
        local.Free()
        cross.Free()
        self.launch_id = comm.bcast(random.getrandbits(62) if self.rank == 0 else None, root=0)
        self.threads_multiple = provided >= MPI.THREAD_MULTIPLE
        self.failure = None
        self.task_names = {}  # rank -> "/job:ps/task:0", once a tf.train.Server names this world's tasks
        self._failure_listeners = []
        self._left_listeners = []
        self.engine = Engine(settings.spin_seconds, on_stop=self._close)
        self.control = Control(self)
        self.transport = Transport(self)
        self.collectives = Controller(self)
        self.engine.start()

    def describe(self, rank):
        """How errors name a rank: by its cluster task when a Server gave it one (users think in tasks)."""
        task = self.task_names.get(rank)
        return f"{task} (rank {rank})" if task else f"rank {rank}"

    # ---- failure ------------------------------------------------------------------------------------
    def on_failure(self, listener):
        """``listener(error)`` runs (on the MPI thread) when the job fails; at once if it already has."""
        self._failure_listeners.append(listener)
        if self.failure is not None:
            self.engine.call(listener, self.failure)

    def on_peer_left(self, listener):
        self._left_listeners.append(listener)

    def fail(self, error, notify=True, failed=True):
        """The job cannot go on: every pending and later operation fails with ``error`` (first one wins).
        ``notify``: tell the other ranks, as having ``failed`` itself or as having found the job's failure (a dead
        peer, a stall)."""
        if self.failure is not None:
            return
        self.failure = error
        sys.stderr.write(f"tensorweave_distributed: {self.describe(self.rank)}: {error}\n")
        sys.stderr.flush()
        if notify and self.size > 1:
            from tensorweave_distributed.control import ABORT
            self.engine.call(self.control.broadcast, ABORT, (f"{type(error).__name__}: {error}", failed))
        for listener in list(self._failure_listeners):
            self.engine.call(listener, error)

    def peer_left(self, rank):
        for listener in list(self._left_listeners):
            listener(rank)

    def check(self):
        """Raises the job's failure, if any (before starting new work)."""
        if self.failure is not None:
            raise type(self.failure)(None, None, str(self.failure))

    # ---- shutdown -----------------------------------------------------------------------------------
    def shutdown(self, timeout=5.0):
        """Waits (up to ``timeout``) for this rank's collectives and sends to finish, says goodbye, receives
        until every other rank's last message has arrived, and stops the MPI thread (idempotent)."""
        if not self.engine.running:
            return
        if self.failure is None and self.size > 1:
            deadline = time.monotonic() + timeout
            try:
                while time.monotonic() < deadline and self.engine.call_and_wait(self._busy, timeout=timeout):
                    time.sleep(0.005)
                self.engine.call(self._say_goodbye)
                while time.monotonic() < deadline and not self.engine.call_and_wait(self._drained, timeout=timeout):
                    time.sleep(0.002)
            except TimeoutError:
                pass
        self.engine.stop(timeout)

    def _busy(self):
        return not self.collectives.idle() or self.transport.sending > 0

    def _say_goodbye(self):
        self.transport.say_goodbye()
        self.control.say_goodbye()

    def _drained(self):
        """Nothing more can arrive, and nothing this rank posted is still open."""
        return self.control.finished() and self.transport.finished() and not self.engine.outstanding()

    def _close(self):
        """The MPI thread's last act: receive and drop what arrived unasked (the job is over for this rank)."""
        from mpi4py import MPI
        status = MPI.Status()
        for name, comm in (("control", self.ctrl), ("collective", self.coll), ("send/recv", self.p2p)):
            for _ in range(10_000):
                message = comm.Improbe(MPI.ANY_SOURCE, MPI.ANY_TAG, status)
                if message is None:
                    break
                message.Recv([bytearray(status.Get_count(MPI.BYTE)), MPI.BYTE])
                _log.debug("rank %d: dropped a %s message (tag %d) from rank %d at shutdown", self.rank, name,
                           status.Get_tag(), status.Get_source())


def init(comm=None, **settings):
    """Starts tensorweave_distributed on ``comm`` (default COMM_WORLD); collective; idempotent.

    ``settings`` override the ``TENSORWEAVE_*`` environment variables (see ``settings.Settings``).
    """
    global _world
    with _lock:
        if _world is not None:
            if comm is not None and comm is not _world.comm:
                raise ValueError("tensorweave_distributed is already initialized on another communicator; "
                                 "call shutdown() first")
            return _world
        from mpi4py import MPI

        from tensorweave_distributed.settings import from_environment
        world = World(comm if comm is not None else MPI.COMM_WORLD, from_environment(**settings))
        _world = world
        _install_exit_handlers()
        return world


def shutdown():
    """Stops the MPI thread after saying goodbye; ``init()`` may be called again afterwards."""
    global _world
    with _lock:
        world, _world = _world, None
    if world is not None:
        world.shutdown()


def get_world(required=True):
    world = _world
    if world is None and required:
        raise errors.FailedPreconditionError(None, None, (
            "tensorweave_distributed is not initialized: call tensorweave_distributed.init() first, on every rank "
            "(launch with: mpiexec -n <ranks> python -m mpi4py your_script.py)"))
    return world


def is_initialized():
    return _world is not None


_handlers_installed = False


def _install_exit_handlers():
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    atexit.register(_at_exit)
    previous_hook = sys.excepthook

    def excepthook(exc_type, exc, tb):
        world = _world
        if world is not None and world.failure is None and world.size > 1:
            world.fail(errors.AbortedError(None, None, f"uncaught {exc_type.__name__}: {exc}"))
        previous_hook(exc_type, exc, tb)

    sys.excepthook = excepthook
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGUSR1) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGUSR1, _on_peer_failure_signal)


def _on_peer_failure_signal(signum, frame):
    world = _world
    if world is not None:
        _log.warning("rank %d: mpiexec reports that a process of the job failed; looking for it", world.rank)
        world.control.suspect()


def _at_exit():
    world = _world
    if world is None:
        return
    if world.failure is not None:
        try:  # let the abort notices go out first, so the other ranks can say why they stop
            world.engine.call_and_wait(lambda: None, timeout=1.0)
            time.sleep(0.2)
        except TimeoutError:
            pass
        world.engine.stop(1.0)
        sys.stdout.flush()
        sys.stderr.flush()
        from mpi4py import MPI
        MPI.COMM_WORLD.Abort(1)
    world.shutdown()
