"""SummarySaverHook: saves the graph's summaries every N steps or seconds during MonitoredTrainingSession."""

from tensorweave.train import SecondOrStepTimer, SessionRunArgs, SessionRunHook, get_global_step

from tensorweave_board import protos
from tensorweave_board.writer import FileWriterCache

__all__ = ["SummarySaverHook"]


class SummarySaverHook(SessionRunHook):
    """Fetches the summary op(s) with the training step every ``save_steps`` steps (or ``save_secs``
    seconds) and writes them at the global step after that run, as TF1's hook does; the first run always
    saves and marks a session START, so the dashboard can drop points a restart made stale. The global
    step is read again only when the next run may be due, so the steps are exact whichever order the
    fetch and the increment ran in."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("SummarySaverHook needs exactly one of scaffold= or summary_op=")
        if summary_writer is None and output_dir is None:
            raise ValueError("SummarySaverHook needs output_dir= or summary_writer=")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step = get_global_step()
        if self._global_step is None:
            raise RuntimeError("SummarySaverHook needs a global step: create one with "
                               "tf.train.get_or_create_global_step() before the session")

    def _summary_ops(self):
        op = self._scaffold.summary_op if self._scaffold is not None else self._summary_op
        if op is None:
            return None
        return list(op) if isinstance(op, list | tuple) else [op]

    def before_run(self, run_context):
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests = {"global_step": self._global_step}
        ops = self._summary_ops()
        if self._request_summary and ops:
            requests["summary"] = ops
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        fetched = int(run_values.results["global_step"])  # read before or after this run's increment
        step = None
        if self._next_step is None or self._request_summary or self._timer.should_trigger_for_step(fetched + 2):
            step = int(run_context.session.run(self._global_step))  # the exact step, when it matters
        if self._next_step is None:
            self._summary_writer.add_session_log(protos.SessionLog(status=protos.SessionLog.START), step)
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, step)
        self._next_step = (fetched if step is None else step) + 1

    def end(self, session=None):
        if self._summary_writer is not None:
            self._summary_writer.flush()
