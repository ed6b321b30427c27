"""Control messages between ranks, and who is alive.

Small pickled messages travel on their own communicator, by tag: heartbeats, goodbyes (a rank shuts down
cleanly) and their acknowledgements, aborts (a rank failed, or found the job failed, and says why), step aborts
(one ``Session.run`` failed somewhere), the collective coordinator's negotiation, and named services
(``register_service``/``post``: what the parameter-server layer builds its RegisterGraph/RunGraph calls on).
Tensors never travel here.

Every rank sends every other one a heartbeat each ``heartbeat_interval``, carrying the CPU seconds its threads
used outside the MPI thread (the stall check's measure of a busy rank); a rank silent for ``heartbeat_timeout``
is declared dead. After mpiexec signals SIGUSR1 (a process of the job failed; hydra does that under
``-disable-auto-cleanup``) the timeout drops to three intervals.

A goodbye is a rank's last message to each other rank, and a rank that receives one answers with its own last
message (an acknowledgement) unless it already said goodbye: so a leaving rank knows when nothing more can come
from each peer, and receives everything they sent before MPI_Finalize (a message still in flight then is
reported by MPI, and lost).
"""

import logging
import pickle
import time

from mpi4py import MPI

from tensorweave import errors
from tensorweave_distributed.stall import cpu_outside_this_thread

_log = logging.getLogger("tensorweave_distributed")

HEARTBEAT, GOODBYE, ABORT, ABORT_STEP, GOODBYE_ACK, NEGOTIATE, RESPOND, SERVICE = 1, 2, 3, 4, 5, 10, 11, 20
_EAGER_BYTES = 64 * 1024  # messages up to this size are received at once; larger ones without blocking


class Control:
    def __init__(self, world):
        self.world = world
        self.comm = world.ctrl
        self.rank, self.size = world.rank, world.size
        settings = world.settings
        self.interval = settings.heartbeat_interval
        self.timeout = settings.heartbeat_timeout
        now = time.monotonic()
        self.last_seen = {r: now for r in range(self.size) if r != self.rank}
        self.left = set()  # ranks that shut down cleanly
        self.dead = set()
        self.final_sent = set()  # ranks this one sent its last message (goodbye or acknowledgement)
        self.final_received = set()  # ranks whose last message to this one arrived
        self._handlers = {HEARTBEAT: _ignore, GOODBYE: self._on_goodbye, GOODBYE_ACK: self._on_goodbye_ack,
                          ABORT: self._on_abort}
        self._services = {}
        self._outstanding = {r: 0 for r in self.last_seen}
        self._arriving = {}  # source -> [tag, buffer, received] in send order, while a large one is on the way
        self._status = MPI.Status()
        if self.size > 1:
            world.engine.add_poller(self._poll)
            world.engine.add_periodic(self.interval, self._heartbeat)

    # ---- any thread -------------------------------------------------------------------------------
    def register_service(self, name, handler):
        """``handler(source_rank, payload)`` runs on the MPI thread for each ``post(rank, name, payload)``;
        it must return quickly (hand long work to another thread)."""
        if name in self._services:
            raise ValueError(f"service {name!r} is registered twice")
        self._services[name] = handler

    def post(self, rank, name, payload):
        """Sends ``payload`` (picklable, small) to service ``name`` on ``rank``."""
        self.world.engine.call(self.send, rank, SERVICE, (name, payload))

    def suspect(self):
        """Something outside says a process died: declare silent ranks dead after three intervals."""
        self.timeout = min(self.timeout, 3 * self.interval)

    # ---- engine thread ----------------------------------------------------------------------------
    def on(self, tag, handler):
        self._handlers[tag] = handler

    def send(self, rank, tag, obj=None, on_sent=None):
        """Sends ``obj`` to ``rank``; dropped once a goodbye passed between them (nothing may follow it)."""
        if rank in self.final_sent:
            _log.debug("rank %d: a control message (tag %d) for rank %d, which left, was dropped", self.rank, tag,
                       rank)
            if on_sent is not None:
                self.world.engine.call(on_sent)
            return None
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        request = self.comm.Isend([data, MPI.BYTE], rank, tag)
        self.world.engine.watch([request], (lambda: on_sent()) if on_sent else _noop)
        return request

    def broadcast(self, tag, obj=None, on_all_sent=None):
        """Sends to every other rank still there; ``on_all_sent()`` once every send has completed."""
        ranks = [r for r in range(self.size) if r != self.rank and r not in self.dead and r not in self.final_sent]
        left = [len(ranks)]

        def one_sent():
            left[0] -= 1
            if left[0] == 0 and on_all_sent is not None:
                on_all_sent()

        for r in ranks:
            self.send(r, tag, obj, on_sent=one_sent)
        if not ranks and on_all_sent is not None:
            on_all_sent()

    def _poll(self):
        worked = False
        status = self._status
        for _ in range(64):
            message = self.comm.Improbe(MPI.ANY_SOURCE, MPI.ANY_TAG, status)
            if message is None:
                return worked
            worked = True
            source, tag, count = status.Get_source(), status.Get_tag(), status.Get_count(MPI.BYTE)
            self.last_seen[source] = time.monotonic()
            buffer = bytearray(count)
            if count <= _EAGER_BYTES and source not in self._arriving:
                message.Recv([buffer, MPI.BYTE])
                self._dispatch(source, tag, buffer)
            elif count <= _EAGER_BYTES:  # behind a large message from the same rank: keep the order it was sent in
                message.Recv([buffer, MPI.BYTE])
                self._arriving[source].append([tag, buffer, True])
            else:
                entry = [tag, buffer, False]
                self._arriving.setdefault(source, []).append(entry)
                request = message.Irecv([buffer, MPI.BYTE])
                self.world.engine.watch([request], lambda s=source, e=entry: self._received(s, e))
        return worked

    def _received(self, source, entry):
        """A large message arrived: hand on, in send order, everything from its rank that is complete."""
        entry[2] = True
        queue = self._arriving[source]
        while queue and queue[0][2]:
            tag, buffer, _ = queue.pop(0)
            self._dispatch(source, tag, buffer)
        if not queue:
            del self._arriving[source]

    def _dispatch(self, source, tag, buffer):
        obj = pickle.loads(buffer) if buffer else None
        if tag == SERVICE:
            name, payload = obj
            handler = self._services.get(name)
            if handler is None:
                _log.error("rank %d: a message from rank %d for unknown service %r was dropped", self.rank, source,
                           name)
                return
            handler(source, payload)
            return
        handler = self._handlers.get(tag)
        if handler is None:
            _log.error("rank %d: a control message with unknown tag %d from rank %d was dropped", self.rank, tag,
                       source)
            return
        handler(source, obj)

    def _heartbeat(self):
        now = time.monotonic()
        cpu = cpu_outside_this_thread()
        for r, seen in self.last_seen.items():
            if r in self.left or r in self.dead or r in self.final_received or r in self.final_sent:
                continue
            if now - seen > self.timeout:
                self.dead.add(r)
                self.world.fail(errors.UnavailableError(None, None, (
                    f"{self.world.describe(r)} is unavailable: {self.world.describe(self.rank)} has not heard "
                    f"from it for {now - seen:.1f} s "
                    f"(heartbeat timeout {self.timeout:g} s). It probably died (killed, out of memory, or its host "
                    f"went down); look at its output. The job cannot continue: restart it, from the last "
                    f"checkpoint.")), failed=False)
                continue
            if self._outstanding[r] < 2:
                self._outstanding[r] += 1
                self.send(r, HEARTBEAT, cpu, on_sent=lambda r=r: self._sent_heartbeat(r))

    def _sent_heartbeat(self, rank):
        self._outstanding[rank] -= 1

    def say_goodbye(self):
        """Sends this rank's last message to every other rank still there (it is leaving)."""
        for r in self.last_seen:
            if r not in self.dead and r not in self.final_sent:
                self.send(r, GOODBYE)
                self.final_sent.add(r)

    def finished(self):
        """Every other rank's last message to this one has arrived, or the rank is dead."""
        return all(r in self.final_received or r in self.dead for r in self.last_seen)

    def _on_goodbye(self, source, _):
        self.final_received.add(source)
        self.left.add(source)
        if source not in self.final_sent:
            self.send(source, GOODBYE_ACK)
            self.final_sent.add(source)
        self.world.peer_left(source)

    def _on_goodbye_ack(self, source, _):
        self.final_received.add(source)

    def _on_abort(self, source, message):
        text, failed = message
        what = "failed and aborted the job" if failed else "aborted the job"
        self.world.fail(errors.AbortedError(None, None, f"{self.world.describe(source)} {what}: {text}"), notify=False)


def _noop():
    pass


def _ignore(source, obj):
    pass
