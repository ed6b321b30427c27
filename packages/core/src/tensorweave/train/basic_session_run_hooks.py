"""The standard SessionRunHooks: stop at a step, save checkpoints, stop on NaN loss, log tensors, count
steps per second, run final ops, feed every step, wait for a global step."""

import logging
import os
import time

import numpy as np

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.registry import get_registries
from tensorweave.framework.tensor import Tensor
from tensorweave.protos.summary import Summary
from tensorweave.train import training_util
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook",
           "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook", "SecondOrStepTimer",
           "StepCounterHook", "StopAtStepHook"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


def _global_step_tensor(hook):
    step = training_util.get_global_step()
    if step is None:
        raise RuntimeError(f"{type(hook).__name__} needs a global step: create one with "
                           f"tf.train.get_or_create_global_step() before the session")
    return step


class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (exactly one of them)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps must be given")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_time = None
        self._last_step = None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_time + self._every_secs
        return step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at ``step``; returns (seconds, steps) since the previous one (None at first)."""
        now = time.time()
        elapsed = (None, None) if self._last_time is None else (now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches ``last_step`` (or ``num_steps`` past its start value)."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("exactly one of num_steps and last_step must be given")
        if num_steps is not None and num_steps < 0:
            raise ValueError(f"num_steps must be non-negative, got {num_steps}")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step = _global_step_tensor(self)

    def after_create_session(self, session, coord):
        if self._num_steps is not None:
            self._last_step = int(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if run_values.results + 1 >= self._last_step:  # the fetched value may predate this step's increment
            if int(run_context.session.run(self._global_step)) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Called around each save of a CheckpointSaverHook; ``after_save`` returning True stops training."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session starts, every ``save_secs`` or ``save_steps``, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None, save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("pass a saver or a scaffold, not both")
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._saver = saver
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def

    def begin(self):
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        self._global_step = _global_step_tensor(self)
        for listener in self._listeners:
            listener.begin()

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = graph_mod.get_collection(graph_mod.GraphKeys.SAVERS)
        if len(savers) != 1:
            raise RuntimeError(f"CheckpointSaverHook needs exactly one Saver in the SAVERS collection, found "
                               f"{len(savers)}; pass saver= or scaffold=")
        return savers[0]

    def after_create_session(self, session, coord):
        step = int(session.run(self._global_step))
        self._save(session, step)  # the state at the start, so a crash before the first interval loses nothing
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(run_values.results + 1):
            step = int(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step):
        """Saves; True if a listener asks to stop."""
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def)
        return any([bool(listener.after_save(session, step)) for listener in self._listeners])


class StepCounterHook(SessionRunHook):
    """Logs global steps per second every ``every_n_steps`` steps or ``every_n_secs`` seconds, and writes it as
    the ``global_step/sec`` summary into ``output_dir`` (or ``summary_writer``) when the dashboard package is
    installed, as TF's hook does."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs must be given")
        self._timer = SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_steps)
        self._output_dir, self._summary_writer = output_dir, summary_writer
        self.steps_per_sec = None

    def begin(self):
        self._global_step = _global_step_tensor(self)
        self._summary_tag = self._global_step.op.name + "/sec"
        if self._summary_writer is None and self._output_dir:
            summary = get_registries().api.get("summary")
            if summary is not None:
                self._summary_writer = summary.FileWriterCache.get(self._output_dir)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        # the step fetched is the one before this run's increment; like TF, read the real one only when due
        if not self._timer.should_trigger_for_step(int(run_values.results) + 1):
            return
        step = int(run_context.session.run(self._global_step))
        if self._timer.should_trigger_for_step(step):
            secs, steps = self._timer.update_last_triggered_step(step)
            if secs:
                self.steps_per_sec = steps / secs
                if self._summary_writer is not None:
                    value = Summary.Value(tag=self._summary_tag, simple_value=self.steps_per_sec)
                    self._summary_writer.add_summary(Summary(value=[value]), step)
                _log.info("%s: %g", self._summary_tag, self.steps_per_sec)


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (NanLossDuringTrainingError) or stops when ``loss_tensor`` becomes NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results).any():
            if self._fail_on_nan_loss:
                _log.error("model diverged with loss = NaN")
                raise NanLossDuringTrainingError
            _log.warning("model diverged with loss = NaN; stopping training")
            run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of ``tensors`` every ``every_n_iter`` runs or ``every_n_secs`` seconds (and at the end)."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_iter and every_n_secs must be given (or only at_end=True)")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"every_n_iter must be positive, got {every_n_iter}")
        if not isinstance(tensors, dict):
            self._tag_order = [t.name if isinstance(t, Tensor) else t for t in tensors]
            tensors = {tag: t for tag, t in zip(self._tag_order, tensors)}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._log_at_end = at_end
        self._timer = None if only_at_end else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)

    def begin(self):
        self._iter_count = 0
        self._current = {tag: graph_mod.get_default_graph().as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer is not None and self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current) if self._should_trigger else None

    def _log_values(self, values):
        """Logs as TF does: ``tag = value`` (numpy's str, no scientific notation), then the seconds since the
        previous line."""
        elapsed_secs = None
        if self._timer is not None:
            elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter is not None:
            _log.info(self._formatter(values))
            return
        with np.printoptions(suppress=True):
            stats = ", ".join("%s = %s" % (tag, values[tag]) for tag in self._tag_order)
        if elapsed_secs is not None:
            _log.info("%s (%.3f sec)", stats, elapsed_secs)
        else:
            _log.info("%s", stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_values(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_values(session.run(self._current))


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` when the loop ends; their values are in ``final_ops_values``."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)


class FeedFnHook(SessionRunHook):
    """Adds ``feed_fn()``'s feed_dict to every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches ``wait_until_step`` (staggered worker starts)."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = self._wait_until_step <= 0
        self._global_step = _global_step_tensor(self)

    def before_run(self, run_context):
        while not self._worker_is_started:
            if int(run_context.session.run(self._global_step)) >= self._wait_until_step:
                self._worker_is_started = True
            else:
                time.sleep(0.5)
        return None
