"""Running a traced function (``tensorweave.ops.traced_function``) from a kernel, once per call.

A function is a plan of the session's own graph that fetches the function's outputs and feeds its arguments
and captures: it is pruned, optimized, placed and compiled once per session like any ``Session.run``
signature, and each call runs it as a step of its own, which ``Session.close`` cancels like any running step.
Stateful ops inside (random draws, variable reads, queues) use the session's resources.
"""

import threading
import weakref

from tensorweave import errors
from tensorweave.runtime.rendezvous import LocalRendezvous
from tensorweave.runtime.step import StepState


class FunctionRunner:
    """Calls ``function`` in ``session``: ``runner(values)`` feeds ``function.inputs`` and returns its outputs.

    The runner holds the session weakly, so pipelines that keep one do not keep a dropped session alive.
    """

    def __init__(self, session, function):
        if session is None or getattr(session, "_remote", None) is not None:
            raise errors.UnimplementedError(None, None, (
                f"function {function.name!r} can only run in a Session of this process (target '' or "
                f"'local://...'); build the input pipeline in a local session"))
        self.function = function
        self._session = weakref.ref(session)
        self._plan = session._get_plan(tuple(function.outputs), (), tuple(function.inputs))
        self._num_inputs = len(function.inputs)

    def __call__(self, values):
        if len(values) != self._num_inputs:
            raise errors.InvalidArgumentError(None, None, (
                f"function {self.function.name!r} takes {self._num_inputs} values (arguments and captures), "
                f"got {len(values)}"))
        session = self._session()
        if session is None:
            raise errors.CancelledError(None, None, f"the session running function {self.function.name!r} is gone")
        step = StepState(LocalRendezvous(), None, None, session)
        step.thread_id = threading.get_ident()
        with session._lock:
            if session._closed:
                raise errors.CancelledError(None, None, f"the session running function {self.function.name!r} "
                                                        f"was closed")
            session._active_steps.add(step)
        results = [None] * self._plan.num_fetches
        try:
            self._plan.run(step, list(values), results, session._partition_threads)
            step.rendezvous.finish()
        finally:
            with session._lock:
                session._active_steps.discard(step)
        return results
