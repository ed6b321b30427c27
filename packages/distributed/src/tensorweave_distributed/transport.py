"""Send/Recv between processes: the values of rendezvous keys, carried over MPI.

A value travels as a small pickled header (step, key, dtype, shape) followed, for more than
``INLINE_BYTES``, by its bytes straight from the numpy buffer (never pickled). The receiver probes for
headers, allocates the array and posts the matching receive at once, so a value can arrive before its Recv
runs; MPI's ordering per sender keeps each payload with its header. Values wait in a table keyed by
(step, key) until their Recv asks, so concurrent steps and loop iterations never take each other's values.
Sends never block, so two ranks sending to each other at once cannot deadlock.

A failed step is aborted on every rank (its waiting Recvs fail with the reason, later values for it are
dropped); a dead or departed peer fails the Recvs that wait on it.

A leaving rank's last header to each peer is a fin; a peer that gets one answers with its own fin (its last header
to the leaving rank) unless it sent one already, and sends it nothing more. The leaving rank receives until every
peer's fin has arrived, so no value is still on its way when it finalizes.
"""

import collections
import logging
import pickle

import numpy as np
from mpi4py import MPI

from tensorweave import errors
from tensorweave_distributed.control import ABORT_STEP

HEADER, PAYLOAD = 1, 2
INLINE_BYTES = 4096
_log = logging.getLogger("tensorweave_distributed")
_FIN = "fin"  # the last header a rank sends: nothing more comes from it
_REMEMBERED_ABORTS = 4096


class _Waiter:
    __slots__ = ("callback", "source")

    def __init__(self, callback, source):
        self.callback = callback
        self.source = source


def encode(value, is_dead):
    """(meta, payload) where payload is a uint8 array, bytes, or None."""
    if is_dead:
        return ("dead",), None
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        array = value if value.flags.c_contiguous else value.copy(order="C")  # (ascontiguousarray makes 0-d 1-d)
        return ("array", array.dtype.str, array.shape), (array.reshape(-1).view(np.uint8) if array.size else None)
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return ("scalar", value.dtype.str), np.asarray(value).reshape(1).view(np.uint8)
    return ("pickle",), pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def allocate(meta):
    """The array a payload described by ``meta`` lands in, and the uint8 view MPI writes."""
    if meta[0] == "array":
        array = np.empty(meta[2], dtype=np.dtype(meta[1]))
        return array, array.reshape(-1).view(np.uint8)
    if meta[0] == "scalar":
        array = np.empty(1, dtype=np.dtype(meta[1]))
        return array, array.view(np.uint8)
    return None, None


def decode(meta, data):
    """The value from ``meta`` and its received bytes (or the array they were received into)."""
    kind = meta[0]
    if kind == "dead":
        return None
    if kind == "pickle":
        return pickle.loads(data)
    if isinstance(data, np.ndarray):
        return data[0] if kind == "scalar" else data
    array = np.frombuffer(data, dtype=np.dtype(meta[1])).copy() if data else np.empty(0, np.dtype(meta[1]))
    return array[0] if kind == "scalar" else array.reshape(meta[2])


class Transport:
    def __init__(self, world):
        self.world = world
        self.comm = world.p2p
        self.rank = world.rank
        self.bytes_sent = 0
        self.sending = 0
        self.departed = set()
        self.fin_sent, self.fin_received = set(), set()
        self._table = {}
        self._waiters = 0
        self._aborted = collections.OrderedDict()
        self._status = MPI.Status()
        engine = world.engine
        engine.add_poller(self._poll)
        engine.add_busy_check(lambda: self._waiters > 0)
        world.control.on(ABORT_STEP, self._on_abort_step)
        world.on_failure(self._fail_all)

    # ---- any thread -------------------------------------------------------------------------------
    def send(self, dest, step, key, value, is_dead=False):
        """Sends ``value`` for (step, key) to rank ``dest``; never blocks."""
        self.world.check()
        meta, payload = encode(value, is_dead)
        self.world.engine.call(self._send, dest, step, key, meta, payload)

    def recv(self, source, step, key, callback):
        """``callback(error, value, is_dead)`` once the value for (step, key) from rank ``source`` is here."""
        self.world.engine.call(self._recv, source, step, key, callback)

    def abort_step(self, step, error):
        """Fails the step's waiting Recvs here and tells the other ranks to do the same."""
        self.world.engine.call(self._abort_step, step, error, True)

    # ---- engine thread ----------------------------------------------------------------------------
    def _send(self, dest, step, key, meta, payload):
        if dest in self.fin_sent:  # it left: nothing may follow the fin
            _log.debug("rank %d: the value of %s for step %s was not sent: rank %d has left", self.rank, key, step,
                       dest)
            return
        size = 0 if payload is None else len(payload)
        inline = payload is not None and size <= INLINE_BYTES
        header = pickle.dumps((step, key, meta, bytes(payload) if inline else size if payload is not None else None),
                              protocol=pickle.HIGHEST_PROTOCOL)
        requests = [self.comm.Isend([header, MPI.BYTE], dest, HEADER)]
        if payload is not None and not inline:
            requests.append(self.comm.Isend([payload, MPI.BYTE], dest, PAYLOAD))
        self.bytes_sent += size
        self.sending += 1
        self.world.engine.watch(requests, lambda: self._sent(header, payload))  # keeps the buffers alive

    def _sent(self, header, payload):
        self.sending -= 1

    def say_goodbye(self):
        """Tells every other rank still there, behind everything this rank sent it, that nothing more will come."""
        for r in range(self.world.size):
            if r != self.rank and r not in self.world.control.dead and r not in self.fin_sent:
                self._send_fin(r)

    def _send_fin(self, rank):
        self.fin_sent.add(rank)
        header = pickle.dumps(_FIN)
        self.world.engine.watch([self.comm.Isend([header, MPI.BYTE], rank, HEADER)], lambda: header)

    def finished(self):
        """Every other rank's fin has arrived, or the rank is dead."""
        dead = self.world.control.dead
        return all(r in self.fin_received or r in dead for r in range(self.world.size) if r != self.rank)

    def _poll(self):
        worked = False
        status = self._status
        for _ in range(64):
            message = self.comm.Improbe(MPI.ANY_SOURCE, HEADER, status)
            if message is None:
                return worked
            worked = True
            source = status.Get_source()
            header = bytearray(status.Get_count(MPI.BYTE))
            message.Recv([header, MPI.BYTE])
            decoded = pickle.loads(header)
            if decoded == _FIN:
                self.fin_received.add(source)
                if source not in self.fin_sent:
                    self._send_fin(source)
                self._peer_left(source)
                continue
            step, key, meta, data = decoded
            if data is None or isinstance(data, bytes):
                self._deliver(step, key, decode(meta, data), meta[0] == "dead", source)
                continue
            array, view = allocate(meta)
            target = view if view is not None else bytearray(data)
            request = self.comm.Irecv([target, MPI.BYTE], source, PAYLOAD)
            self.world.engine.watch([request], lambda s=step, k=key, m=meta, a=array, t=target, src=source:
                                    self._deliver(s, k, decode(m, a if a is not None else bytes(t)), False, src))
        return worked

    def _deliver(self, step, key, value, is_dead, source):
        if step in self._aborted:
            return
        slot = (step, key)
        entry = self._table.pop(slot, None)
        if isinstance(entry, _Waiter):
            self._waiters -= 1
            entry.callback(None, value, is_dead)
            return
        if entry is not None:
            self._table[slot] = entry
            self.world.fail(errors.InternalError(None, None, (
                f"rendezvous key {key} of step {step} arrived twice (the second time from {self.world.describe(source)}); the ranks "
                f"run different graphs or sessions in a different order")))
            return
        self._table[slot] = (value, is_dead)

    def _recv(self, source, step, key, callback):
        slot = (step, key)
        entry = self._table.get(slot)
        error = self._recv_error(source, step, key) if entry is None or isinstance(entry, _Waiter) else None
        if error is not None:
            callback(error, None, False)
            return
        entry = self._table.pop(slot, None)
        if entry is None:
            self._table[slot] = _Waiter(callback, source)
            self._waiters += 1
        elif isinstance(entry, _Waiter):
            self._table[slot] = entry
            callback(errors.InternalError(None, None, f"rendezvous key {key} of step {step} was received twice"),
                     None, False)
        else:
            callback(None, entry[0], entry[1])

    def _recv_error(self, source, step, key):
        world = self.world
        if world.failure is not None:
            return world.failure
        if step in self._aborted:
            return self._aborted[step]
        if source in world.control.dead or source in self.departed:
            return _gone(self.world.describe(source), key)
        return None

    def _abort_step(self, step, error, notify):
        if step in self._aborted:
            return
        self._aborted[step] = error
        if len(self._aborted) > _REMEMBERED_ABORTS:
            self._aborted.popitem(last=False)
        for slot in [s for s in self._table if s[0] == step]:
            entry = self._table.pop(slot)
            if isinstance(entry, _Waiter):
                self._waiters -= 1
                entry.callback(error, None, False)
        if notify and self.world.size > 1:
            self.world.control.broadcast(ABORT_STEP, (step, f"{type(error).__name__}: {error}"))

    def _on_abort_step(self, source, message):
        step, text = message
        peer = self.world.describe(source)
        self._abort_step(step, errors.AbortedError(None, None, f"the step was aborted on {peer}: {text}"), False)

    def _fail_waiters(self, error_for):
        for slot, entry in list(self._table.items()):
            if isinstance(entry, _Waiter):
                error = error_for(entry, slot)
                if error is not None:
                    del self._table[slot]
                    self._waiters -= 1
                    entry.callback(error, None, False)

    def _fail_all(self, error):
        self._fail_waiters(lambda entry, slot: error)
        self._table.clear()

    def _peer_left(self, rank):
        self.departed.add(rank)
        self._fail_waiters(lambda entry, slot: _gone(self.world.describe(rank), slot[1]) if entry.source == rank else None)


def _gone(peer, key):
    return errors.UnavailableError(None, None, (
        f"cannot receive {key.split(';')[3] if key.count(';') >= 4 else key} from {peer}: that rank has shut "
        f"down or died. Every rank must run the same steps; check that rank's output."))
