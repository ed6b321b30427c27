"""``tf.estimator.train_and_evaluate`` with ``TrainSpec`` / ``EvalSpec``, run locally as TF 1.15's training
executor does: one ``train`` call whose checkpoint listener evaluates (and runs the exporters) after each new
checkpoint, at most once every ``throttle_secs``, and once more at the end."""

import collections
import logging
import os
import time

from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.export.exporter import Exporter
from tensorweave.train.basic_session_run_hooks import CheckpointSaverListener, SecondOrStepTimer
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["EvalSpec", "TrainSpec", "train_and_evaluate"]

_log = logging.getLogger("tensorflow")


def _validate_hooks(hooks):
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be `SessionRunHook` instances, given: {hook}")
    return hooks


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    """What to train on and until which global step."""

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn=input_fn, max_steps=max_steps, hooks=_validate_hooks(hooks))


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs"])):
    """What to evaluate on, for how many batches, how often, and what to export after each evaluation."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
                throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name}")
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        return super().__new__(cls, input_fn=input_fn, steps=steps, name=name, hooks=_validate_hooks(hooks),
                               exporters=_validate_exporters(exporters), start_delay_secs=start_delay_secs,
                               throttle_secs=throttle_secs)


def _validate_exporters(exporters):
    if not exporters:
        return ()
    if isinstance(exporters, Exporter):
        exporters = [exporters]
    try:
        exporters = list(exporters)
    except TypeError:
        raise TypeError(f"`exporters` must be an Exporter, an iterable of Exporter, or `None`, found "
                        f"{exporters}.") from None
    names = []
    for exporter in exporters:
        if not isinstance(exporter, Exporter):
            raise TypeError(f"`exporters` must be an Exporter, an iterable of Exporter, or `None`, found "
                            f"{exporters}.")
        if not exporter.name:
            raise ValueError(f"An Exporter cannot have a name that is `None` or empty. All exporter names: "
                             f"{[e.name for e in exporters]}")
        if not isinstance(exporter.name, str):
            raise ValueError(f"An Exporter must have a string name. Given: {type(exporter.name)}")
        if exporter.name in names:
            raise ValueError(f"`exporters` must have unique names. Such a name cannot be `None`. All exporter "
                             f"names: {[e.name for e in exporters]}")
        names.append(exporter.name)
    return tuple(exporters)


class _Evaluator:
    """Evaluates the newest checkpoint once (never the same one twice) and runs the exporters on it."""

    def __init__(self, estimator, eval_spec, max_training_steps):
        self._estimator, self._eval_spec, self._max_training_steps = estimator, eval_spec, max_training_steps
        self._previous_ckpt_path = None
        self._last_warning_time = 0

    def _log_err_msg(self, message):
        if time.time() - self._last_warning_time > 60:
            _log.warning(message)
            self._last_warning_time = time.time()

    def evaluate_and_export(self):
        """(metrics or None, export results)."""
        latest = self._estimator.latest_checkpoint()
        if not latest:
            self._log_err_msg("Estimator is not trained yet. Will start an evaluation when a checkpoint is ready.")
            return None, []
        if latest == self._previous_ckpt_path:
            self._log_err_msg("No new checkpoint ready for evaluation. Skip the current evaluation pass as evaluation "
                              "results are expected to be same for the same checkpoint.")
            return None, []
        metrics = self._estimator.evaluate(input_fn=self._eval_spec.input_fn, steps=self._eval_spec.steps,
                                           name=self._eval_spec.name, checkpoint_path=latest,
                                           hooks=self._eval_spec.hooks)
        final = bool(self._max_training_steps) and metrics["global_step"] >= self._max_training_steps
        export_base = os.path.join(self._estimator.model_dir, "export")
        exports = [exporter.export(estimator=self._estimator, export_path=os.path.join(export_base, exporter.name),
                                   checkpoint_path=latest, eval_result=metrics, is_the_final_export=final)
                   for exporter in self._eval_spec.exporters]
        self._previous_ckpt_path = latest
        return metrics, exports


class _NewCheckpointListenerForEvaluate(CheckpointSaverListener):
    """Evaluates after each checkpoint save but the first (the untrained one), throttled by ``throttle_secs``."""

    def __init__(self, evaluator, eval_throttle_secs):
        self._evaluator = evaluator
        self._eval_throttle_secs = eval_throttle_secs
        self.eval_result, self.export_results = None, []

    def begin(self):
        self._timer = SecondOrStepTimer(every_secs=self._eval_throttle_secs)
        self._is_first_run = True

    def after_save(self, session, global_step_value):
        if self._is_first_run:
            self._is_first_run = False
            return False
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            _log.info("Skip the current checkpoint eval due to throttle secs (%s secs).", self._eval_throttle_secs)
        return False

    def end(self, session, global_step_value):
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value):
        self._timer.update_last_triggered_step(global_step_value)
        metrics, self.export_results = self._evaluator.evaluate_and_export()
        if metrics is None:
            raise RuntimeError("There was no new checkpoint after the training. Eval status: no new checkpoint")
        self.eval_result = metrics


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains ``estimator`` on ``train_spec`` and evaluates it on ``eval_spec`` after its checkpoints; returns
    (the last evaluation's metrics, the last exports' results)."""
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}")
    config = estimator.config
    _log.info("Running training and evaluation locally (non-distributed).")
    _log.info("Start train and evaluate loop. The evaluate will happen after every checkpoint. Checkpoint frequency "
              "is determined based on RunConfig arguments: save_checkpoints_steps %s or save_checkpoints_secs %s.",
              config.save_checkpoints_steps, config.save_checkpoints_secs)
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    listener = _NewCheckpointListenerForEvaluate(evaluator, eval_spec.throttle_secs)
    estimator.train(input_fn=train_spec.input_fn, max_steps=train_spec.max_steps, hooks=list(train_spec.hooks),
                    saving_listeners=[listener])
    return listener.eval_result, listener.export_results
