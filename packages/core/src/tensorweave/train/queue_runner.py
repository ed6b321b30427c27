"""tf.train.QueueRunner: threads that keep running enqueue ops, so a queue stays full while training reads it.

Shutdown is clean by default: with a Coordinator, a stop request runs the cancel op (close the queue,
cancelling pending enqueues), which wakes a runner blocked on a full queue and makes dequeuers of a
drained queue raise OutOfRangeError instead of waiting forever.
"""

import logging
import threading
import time
import weakref

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.default_session import get_default_session
from tensorweave.ops.data_flow_ops import QueueBase
from tensorweave.protos.meta_graph import QueueRunnerDef

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


class QueueRunner:
    """Runs each of ``enqueue_ops`` in a loop on its own thread.

    When an enqueue op raises one of ``queue_closed_exception_types`` (OutOfRangeError: its input
    ran out) its thread ends, and the last one to end runs ``close_op``. Other exceptions go to the
    coordinator (re-raised by ``coord.join``), or without one are kept in ``exceptions_raised``.
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            if queue is not None or enqueue_ops:
                raise ValueError("QueueRunner takes queue_runner_def or queue and enqueue_ops, not both")
            queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types = _from_proto(
                queue_runner_def, import_scope)
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and a non-empty list of enqueue_ops")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types or (errors.OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    def to_proto(self, export_scope=None):
        """TF's QueueRunnerDef naming this runner's ops (None when the queue lies outside ``export_scope``)."""
        def strip(name):
            if not export_scope:
                return name
            return name[len(export_scope) + 1:] if name.startswith(export_scope + "/") else None
        if strip(self._queue.name) is None:
            return None
        return QueueRunnerDef(queue_name=strip(self._queue.name),
                              enqueue_op_name=[strip(op.name) for op in self._enqueue_ops],
                              close_op_name=strip(self._close_op.name), cancel_op_name=strip(self._cancel_op.name),
                              queue_closed_exception_types=[e.error_code for e in self._queue_closed_exception_types])

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Exceptions the threads raised when no coordinator took them."""
        return list(self._exceptions_raised)

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord):
        decremented = False
        try:
            enqueue = sess.make_callable(enqueue_op)
            while not (coord and coord.should_stop()):
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        _run_quietly(sess, self._close_op)
                    return
        except Exception as e:  # noqa: BLE001 - reported to the coordinator or kept
            if _session_closed(sess) or (coord is not None and coord.should_stop()
                                         and isinstance(e, errors.CancelledError)):
                return  # the session closed or the stop cancelled this enqueue: a clean end
            if coord is not None:
                coord.request_stop(e)
            else:
                _log.error("exception in QueueRunner %s: %s", self.name, e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, coord, runners):
        """On the stop: close the queue cancelling pending enqueues, then cancel whatever step a runner
        thread still waits in (e.g. a dequeue from an upstream queue nobody fills any more)."""
        coord.wait_for_stop()
        _run_quietly(sess, self._cancel_op)
        cancel_steps = getattr(sess, "_cancel_steps_of_threads", None)
        error = errors.CancelledError(None, None, f"QueueRunner {self.name}: the coordinator requested a stop")
        while cancel_steps is not None and any(t.is_alive() for t in runners):
            cancel_steps({t.ident for t in runners}, error)
            time.sleep(0.01)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Threads running the enqueue ops in ``sess`` (plus one that cancels them on ``coord``'s stop).

        Returns [] if this runner's threads already run for ``sess``.
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), name=f"QueueRunner:{self.name}:{i}")
                   for i, op in enumerate(self._enqueue_ops)]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord, list(threads)),
                                            name=f"QueueRunner:{self.name}:close_on_stop"))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            t.daemon = daemon
            if start:
                t.start()
        return threads


def _from_proto(queue_runner_def, import_scope):
    """queue, enqueue ops, close op, cancel op and exception types of a QueueRunnerDef, over ops of the default
    graph (a meta graph's queue runners, after its import)."""
    graph = graph_mod.get_default_graph()

    def element(name):
        found = graph.as_graph_element(f"{import_scope}/{name}" if import_scope else name)
        return getattr(found, "op", found)
    queue_op = element(queue_runner_def.queue_name)
    queue = QueueBase(queue_op.get_attr("component_types"), queue_op.get_attr("shapes") or None, None,
                      queue_op.outputs[0])
    codes = queue_runner_def.queue_closed_exception_types
    return (queue, [element(n) for n in queue_runner_def.enqueue_op_name], element(queue_runner_def.close_op_name),
            element(queue_runner_def.cancel_op_name),
            tuple(errors.exception_type_from_error_code(c) for c in codes) or None)


def _session_closed(sess):
    return bool(getattr(sess, "_closed", False))


def _run_quietly(sess, op):
    try:
        sess.run(op)
    except Exception as e:  # noqa: BLE001 - the queue may already be gone with its session
        _log.debug("ignored while closing a queue: %s", e)


def add_queue_runner(qr, collection=graph_mod.GraphKeys.QUEUE_RUNNERS):
    """Adds ``qr`` to the graph's QUEUE_RUNNERS collection, which start_queue_runners starts."""
    graph_mod.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=graph_mod.GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in ``collection``; returns them (for ``coord.join``)."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("cannot start queue runners: no default session is registered. Use "
                             "`with sess.as_default():` or pass sess= to tf.train.start_queue_runners")
    if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession", "_MonitoredSession"):
        return []  # a monitored session starts its queue runners itself
    threads = []
    with sess.graph.as_default():
        for qr in graph_mod.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
