"""MonitoredSession: a training loop's session that restores, runs hooks, feeds queues, and recovers.

It creates its session through a session creator (restore the newest intact checkpoint, else
initialize), starts the graph's queue runners under a Coordinator, calls the hooks around every run,
and on close stops the queue runners and calls the hooks' ``end``. A MonitoredSession also survives
AbortedError/UnavailableError by making a new session (restoring the last checkpoint) and retrying.
"""

import abc
import inspect
import logging

from tensorweave import errors
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.registry import get_registries
from tensorweave.ops import control_flow_ops, lookup_ops, variables
from tensorweave.runtime.config import RunMetadata, RunOptions
from tensorweave.train import basic_session_run_hooks as hooks_lib
from tensorweave.train.coordinator import Coordinator
from tensorweave.train.queue_runner import start_queue_runners
from tensorweave.train.saver import Saver
from tensorweave.train.server_lib import task_role
from tensorweave.train.session_manager import SessionManager
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

__all__ = ["ChiefSessionCreator", "MonitoredSession", "MonitoredTrainingSession", "Scaffold", "SessionCreator",
           "SingularMonitoredSession", "WorkerSessionCreator"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
USE_DEFAULT = object()


class Scaffold:
    """The ops a monitored session needs (init, ready, local init, summary, saver); defaults fill the gaps
    from the graph's collections when ``finalize`` runs, which also finalizes the graph."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None):
        if copy_from_scaffold is not None:
            base = copy_from_scaffold
            init_op, init_feed_dict = init_op or base.init_op, init_feed_dict or base.init_feed_dict
            init_fn, ready_op = init_fn or base._user_init_fn, ready_op or base.ready_op
            ready_for_local_init_op = ready_for_local_init_op or base.ready_for_local_init_op
            local_init_op, summary_op = local_init_op or base.local_init_op, summary_op or base.summary_op
            saver = saver or base.saver
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        if graph_mod.get_default_graph().finalized:
            return self
        keys = graph_mod.GraphKeys
        if self._init_op is None:
            self._init_op = self.get_or_default("init_op", keys.INIT_OP, variables.global_variables_initializer)
        if self._ready_op is None:
            self._ready_op = self.get_or_default("ready_op", keys.READY_OP, variables.report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = self.get_or_default(
                "ready_for_local_init_op", keys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = self.get_or_default("local_init_op", keys.LOCAL_INIT_OP,
                                                      Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = self.get_or_default("summary_op", keys.SUMMARY_OP, _merge_all_summaries)
        if self._saver is None:
            self._saver = _get_saver_or_default()
        self._saver.build()
        graph_mod.get_default_graph().finalize()
        return self

    @staticmethod
    def default_local_init_op():
        """TF1's: the local variables' initializer and every table's (tf.tables_initializer())."""
        return control_flow_ops.group(variables.local_variables_initializer(), lookup_ops.tables_initializer())

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one item of ``collection_key``, else ``default_constructor()`` (added to the collection)."""
        elements = graph_mod.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(f"more than one item in the collection {collection_key!r}; pass the one to use "
                                   f"as tf.train.Scaffold({arg_name}=...)")
            return elements[0]
        op = default_constructor()
        if op is not None:
            graph_mod.add_to_collection(collection_key, op)
        return op

    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    init_fn = property(lambda self: self._init_fn)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)


def _merge_all_summaries():
    summary = get_registries().api.get("summary")
    return summary.merge_all() if summary is not None and hasattr(summary, "merge_all") else None


def _get_saver_or_default():
    savers = graph_mod.get_collection(graph_mod.GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError("more than one Saver in the SAVERS collection; pass the one to use as "
                               "tf.train.Scaffold(saver=...)")
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    graph_mod.add_to_collection(graph_mod.GraphKeys.SAVERS, saver)
    return saver


class SessionCreator(abc.ABC):
    """Makes a tf.Session whose model is ready to run."""

    @abc.abstractmethod
    def create_session(self):
        """Returns the new session."""


class ChiefSessionCreator(SessionCreator):
    """Restores the newest intact checkpoint of ``checkpoint_dir``, or initializes the model."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None, checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        manager = SessionManager(local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
                                 ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                                 graph=graph_mod.get_default_graph())
        return manager.prepare_session(self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
                                       checkpoint_filename_with_path=self._checkpoint_filename_with_path,
                                       config=self._config, init_op=self._scaffold.init_op,
                                       init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """Waits until the chief has initialized or restored the shared model."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config, self._max_wait_secs = master, config, max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        manager = SessionManager(local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
                                 ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                                 graph=graph_mod.get_default_graph(), recovery_wait_secs=0.1)
        return manager.wait_for_session(self._master, config=self._config, max_wait_secs=self._max_wait_secs)


class StepContext:
    """What ``run_step_fn``'s function gets: the raw session, a hooked run, and a way to stop."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        raise StopIteration("step_fn requested the loop to stop")


class _MonitoredSession:
    """The shared machinery of MonitoredSession and SingularMonitoredSession."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = graph_mod.get_default_graph().finalized
        self._graph = graph_mod.get_default_graph()
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._session_creator = session_creator or ChiefSessionCreator()
        self._should_recover = should_recover
        self._stop_grace_period_secs = stop_grace_period_secs
        self._sess = self._coord = None
        self._stop_requested = False
        self._create_session()

    @property
    def graph(self):
        return self._graph

    def _create_session(self):
        self._sess = self._session_creator.create_session()
        self._coord = Coordinator()
        self._threads = start_queue_runners(sess=self._sess, coord=self._coord)
        for hook in self._hooks:
            hook.after_create_session(self._sess, self._coord)

    def _close_session(self, quietly=False):
        sess, coord = self._sess, self._coord
        self._sess = self._coord = None
        try:
            if coord is not None:
                coord.request_stop()
                coord.join(stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True)
        except Exception:  # noqa: BLE001 - a queue runner's error; re-raised unless we are recovering
            if not quietly:
                raise
        finally:
            if sess is not None:
                sess.close()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs ``fetches`` with every hook's additions; recovers from preemption errors when allowed."""
        while True:
            if self._sess is None:
                raise RuntimeError("run() called on a closed MonitoredSession")
            try:
                return self._hooked_run(fetches, feed_dict, options, run_metadata)
            except _PREEMPTION_ERRORS as e:
                if not self._should_recover:
                    raise
                _log.warning("%s: %s; creating a new session and restoring the last checkpoint",
                             type(e).__name__, e)
                self._close_session(quietly=True)
                self._create_session()

    def _hooked_run(self, fetches, feed_dict, options, run_metadata):
        if self.should_stop():
            raise RuntimeError("run() called after should_stop() became true")
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict), self._sess)
        all_fetches, feeds, options = {"caller": fetches}, dict(feed_dict or {}), options or RunOptions()
        for i, hook in enumerate(self._hooks):
            request = hook.before_run(context)
            if request is None:
                continue
            if request.fetches is not None:
                all_fetches[i] = request.fetches
            for key, value in (request.feed_dict or {}).items():
                if key in feeds:
                    raise RuntimeError(f"{key!r} is fed both by {type(hook).__name__} and by the caller or another hook")
                feeds[key] = value
            if request.options is not None:
                options.trace_level = max(options.trace_level, request.options.trace_level)
                # TF1 merges hooks' deadlines by the maximum (0, no deadline, yields to any other)
                options.timeout_in_ms = max(options.timeout_in_ms, request.options.timeout_in_ms)
        run_metadata = run_metadata if run_metadata is not None else RunMetadata()
        try:
            outputs = self._sess.run(all_fetches, feed_dict=feeds, options=options, run_metadata=run_metadata)
        except Exception:
            if self._coord is not None:
                self._coord.raise_requested_exception()  # a queue runner's failure explains ours
            raise
        for i, hook in enumerate(self._hooks):
            hook.after_run(context, SessionRunValues(outputs.get(i), options, run_metadata))
        self._stop_requested = self._stop_requested or context.stop_requested
        return outputs["caller"]

    def run_step_fn(self, step_fn):
        """Calls ``step_fn(step_context)``; ``step_context.request_stop()`` ends the loop."""
        params = [p for p in inspect.signature(step_fn).parameters if p != "self"]
        if params != ["step_context"]:
            raise ValueError(f"step_fn must take one argument named step_context, got {params}")
        try:
            return step_fn(StepContext(self._sess, self.run))
        except StopIteration:
            self._stop_requested = True
            return None

    def should_stop(self):
        return self._sess is None or self._stop_requested or (self._coord is not None and self._coord.should_stop())

    def close(self):
        self._close_internal()

    def _close_internal(self, exception_type=None):
        if self._sess is None:
            raise RuntimeError("the MonitoredSession is already closed")
        try:
            if exception_type is None:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            try:
                self._close_session(quietly=exception_type is not None)
            finally:
                if not self._graph_was_finalized:
                    self._graph._unsafe_unfinalize()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None  # input ran out: a normal end
        if self._sess is not None:
            self._close_internal(exception_type)
        return exception_type is None


class MonitoredSession(_MonitoredSession):
    """A session for training loops: ``while not sess.should_stop(): sess.run(train_op)``."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True, stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession for one process (no recovery), with access to the raw session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        return self._sess


def _writes_checkpoints(directory):
    """Whether this process is its job's chief (or in no job), and so writes checkpoints and summaries."""
    role = task_role()
    if role is None or role[0]:
        return True
    if directory:
        _log.info("MonitoredTrainingSession: this process is %s, so it restores from %s but leaves writing "
                  "checkpoints and summaries there to the chief (pass is_chief=True to write anyway)", role[1],
                  directory)
    return False


def _summary_saver_hook(scaffold, save_steps, save_secs, output_dir):
    """The SummarySaverHook a plugin registered (tensorweave_board's) when the graph has summaries."""
    SummarySaverHook = get_registries().api.get("train.SummarySaverHook")  # noqa: N806 - a class
    if SummarySaverHook is None:
        return None
    if scaffold.summary_op is None and not graph_mod.get_collection(graph_mod.GraphKeys.SUMMARIES):
        return None
    return SummarySaverHook(save_steps=save_steps, save_secs=save_secs, output_dir=output_dir, scaffold=scaffold)


def MonitoredTrainingSession(master="", is_chief=USE_DEFAULT, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None):
    """A MonitoredSession set up for training, as TF1's: the chief restores or initializes the model and
    saves checkpoints (every 600 s by default, or every ``save_checkpoint_steps``), counts steps and, with
    tensorweave_board installed, saves summaries; other tasks wait for the chief.

    Without ``is_chief``, a process in a distributed job (an MPI rank, once tensorweave_distributed started)
    that is not the job's chief restores and initializes as the chief does but writes nothing into
    ``checkpoint_dir`` or ``summary_dir`` (TF1's rule: only the chief saves); outside any job it is the chief."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    save_summaries_steps = None if save_summaries_steps is USE_DEFAULT else save_summaries_steps
    save_summaries_secs = None if save_summaries_secs is USE_DEFAULT else save_summaries_secs
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    save_checkpoint_steps = None if save_checkpoint_steps is USE_DEFAULT else save_checkpoint_steps
    save_checkpoint_secs = None if save_checkpoint_secs is USE_DEFAULT else save_checkpoint_secs
    scaffold = scaffold or Scaffold()
    writes = True
    if is_chief is USE_DEFAULT:
        is_chief, writes = True, _writes_checkpoints(checkpoint_dir or summary_dir)
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, hooks=hooks, stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or []) if writes else []
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir and writes:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(hooks_lib.StepCounterHook(every_n_steps=log_step_count_steps, output_dir=summary_dir))
        if (save_summaries_steps or 0) > 0 or (save_summaries_secs or 0) > 0:
            summary_hook = _summary_saver_hook(scaffold, save_summaries_steps, save_summaries_secs, summary_dir)
            if summary_hook is not None:
                all_hooks.append(summary_hook)
    if checkpoint_dir and writes and ((save_checkpoint_secs or 0) > 0 or (save_checkpoint_steps or 0) > 0):
        all_hooks.append(hooks_lib.CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                                       save_secs=save_checkpoint_secs, scaffold=scaffold))
    all_hooks.extend(hooks or [])
    return MonitoredSession(creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)
