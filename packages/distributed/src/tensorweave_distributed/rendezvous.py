"""One step's rendezvous across processes: what ``_Send``/``_Recv`` kernels talk to in an ``mpi://`` session.

A key whose sending and receiving devices are both in this process stays in an in-process table; any
other goes through the transport to the rank that runs the receiving (or sending) task. The step key
names the step on every rank alike, so the transport can keep concurrent steps apart.
"""

from tensorweave.runtime.rendezvous import LocalRendezvous


class MpiRendezvous:
    """Same contract as ``LocalRendezvous``: ``send`` never blocks, ``recv_async`` calls back, ``abort``
    fails every waiting and later Recv (here and, through the transport, on the other ranks)."""

    def __init__(self, transport, step, rank_of_device):
        self._local = LocalRendezvous()
        self._transport = transport
        self._rank = transport.rank
        self.step = step
        self._rank_of = rank_of_device

    def send(self, key, value, is_dead=False):
        send_device, _, recv_device, _ = key.split(";", 3)
        dest = self._rank_of(recv_device)
        if dest == self._rank:
            self._local.send(key, value, is_dead)
        else:
            self._transport.send(dest, self.step, key, value, is_dead)

    def recv_async(self, key, callback):
        send_device = key.split(";", 1)[0]
        source = self._rank_of(send_device)
        if source == self._rank:
            self._local.recv_async(key, callback)
        else:
            self._transport.recv(source, self.step, key, callback)

    def finish(self):
        """Every rank runs its own partitions of an SPMD step: nothing to wait for."""

    def abort(self, error):
        self._local.abort(error)
        self._transport.abort_step(self.step, error)
