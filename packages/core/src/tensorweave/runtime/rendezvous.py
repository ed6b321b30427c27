"""Rendezvous: where a Send leaves a tensor and the matching Recv picks it up, by key."""

import threading


def make_key(send_device, send_incarnation, recv_device, tensor_name, frame_id="", iteration=0):
    """TF's rendezvous key: source, incarnation, destination, tensor, frame and iteration."""
    return f"{send_device};{send_incarnation:x};{recv_device};{tensor_name};{frame_id}:{iteration}"


def parse_key(key):
    send_device, incarnation, recv_device, tensor_name, frame_iter = key.split(";", 4)  # frame ids hold ';' too
    frame_id, _, iteration = frame_iter.rpartition(":")
    return {"send_device": send_device, "incarnation": int(incarnation, 16), "recv_device": recv_device,
            "tensor_name": tensor_name, "frame_id": frame_id, "iteration": int(iteration)}


class LocalRendezvous:
    """An in-process table for one step. Sends never block; a Recv's callback runs when its Send arrives.

    Callbacks are ``callback(error, value, is_dead)``. ``abort`` fails every waiting and later Recv.
    ``finish`` runs after this process's partitions of the step: a remote rendezvous waits there for the
    other tasks' partitions (the replies to RunGraph); here there is nothing to wait for.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._values = {}
        self._waiters = {}
        self._error = None

    def send(self, key, value, is_dead=False):
        with self._lock:
            if self._error is not None:
                raise self._error
            waiter = self._waiters.pop(key, None)
            if waiter is None:
                if key in self._values:
                    raise RuntimeError(f"rendezvous key {key} was sent twice in one step")
                self._values[key] = (value, is_dead)
                return
        waiter(None, value, is_dead)

    def recv_async(self, key, callback):
        with self._lock:
            if self._error is not None:
                error = self._error
            elif key in self._values:
                value, is_dead = self._values.pop(key)
                error = None
            else:
                if key in self._waiters:
                    raise RuntimeError(f"rendezvous key {key} was received twice in one step")
                self._waiters[key] = callback
                return
        if error is not None:
            callback(error, None, False)
        else:
            callback(None, value, is_dead)

    def finish(self):
        pass

    def abort(self, error):
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            waiters = list(self._waiters.values())
            self._waiters.clear()
            self._values.clear()
        for w in waiters:
            w(error, None, False)
