"""Per-step state: step id, rendezvous, cancellation, per-step resources, tracing; and OpContext."""

import itertools
import threading

from tensorweave import errors

_step_ids = itertools.count(1)


class CancellationManager:
    """Callbacks to run when a step is cancelled (blocked Recv, dequeue, collectives...)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._callbacks = {}
        self._tokens = itertools.count()
        self.error = None

    @property
    def is_cancelled(self):
        return self.error is not None

    def register(self, callback):
        """Returns a token, or None if already cancelled (the caller must then fail at once)."""
        with self._lock:
            if self.error is not None:
                return None
            token = next(self._tokens)
            self._callbacks[token] = callback
            return token

    def deregister(self, token):
        with self._lock:
            self._callbacks.pop(token, None)

    def cancel(self, error):
        with self._lock:
            if self.error is not None:
                return
            self.error = error
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for cb in callbacks:
            cb(error)


class StepState:
    """Everything shared by the partitions of one ``Session.run`` call."""

    def __init__(self, rendezvous, run_options=None, stats=None, session=None):
        self.step_id = next(_step_ids)
        self.rendezvous = rendezvous
        self.cancellation = CancellationManager()
        self.run_options = run_options
        self.stats = stats
        self.session = session
        self.step_container = {}  # per-step resources (stacks for loop gradients, ...)
        self._container_lock = threading.Lock()

    def step_resource(self, key, creator):
        with self._container_lock:
            res = self.step_container.get(key)
            if res is None:
                res = self.step_container[key] = creator()
            return res

    def cancel(self, error):
        self.cancellation.cancel(error)
        self.rendezvous.abort(error)


class OpContext:
    """What a context kernel gets per call: the step, the node, its device and its frame/iteration."""

    __slots__ = ("step", "node", "device", "frame_id", "iteration")

    def __init__(self, step, node, device, frame_id="", iteration=0):
        self.step = step
        self.node = node
        self.device = device
        self.frame_id = frame_id
        self.iteration = iteration

    @property
    def rendezvous(self):
        return self.step.rendezvous

    @property
    def cancellation(self):
        return self.step.cancellation

    @property
    def resource_manager(self):
        return self.device.resource_manager

    @property
    def step_id(self):
        return self.step.step_id

    def wait(self, event, timeout=None):
        """Waits on ``event`` until set, raising the step's cancellation error if cancelled first."""
        while not event.wait(0.05 if timeout is None else min(timeout, 0.05)):
            if self.step.cancellation.is_cancelled:
                raise self.step.cancellation.error
            if timeout is not None:
                timeout -= 0.05
                if timeout <= 0:
                    return False
        return True

    def cancelled_error(self):
        return self.step.cancellation.error or errors.CancelledError(None, None, "step cancelled")
