"""``tf.estimator.Estimator``: a model_fn trained, evaluated and run for predictions, each in a fresh graph on a
(Monitored) session that restores from ``model_dir``'s newest checkpoint, as TF 1.15 does."""

import collections
import copy
import logging
import os
import tempfile

from tensorweave import dtypes
from tensorweave.estimator import evaluation, util
from tensorweave.estimator.export import exporting
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import random_seed
from tensorweave.framework.registry import get_registries
from tensorweave.ops.array_ops import identity
from tensorweave.runtime.config import ConfigProto
from tensorweave.train import basic_session_run_hooks as hooks_lib
from tensorweave.train import checkpoint_management, checkpoint_utils, training_util, warm_starting
from tensorweave.train.monitored_session import ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession
from tensorweave.train.saver import Saver

__all__ = ["Estimator", "VocabInfo", "WarmStartSettings"]

_log = logging.getLogger("tensorflow")

VocabInfo = collections.namedtuple("VocabInfo", ["new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab",
                                                 "old_vocab_size", "backup_initializer", "axis"])


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info", "var_name_to_prev_var_name"])):
    """Which checkpoint (or model_dir, or SavedModel) to warm-start which variables from."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
                var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start, var_name_to_vocab_info or {},
                               var_name_to_prev_var_name or {})


def _warm_start_settings(warm_start_from):
    if warm_start_from is None or isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        if os.path.isdir(os.path.join(path, "variables")):
            _log.info("Warm-starting from a SavedModel")
            return WarmStartSettings(os.path.join(path, "variables", "variables"))
        return WarmStartSettings(path)
    raise ValueError(f"warm_start_from must be a string or a WarmStartSettings, instead got {type(warm_start_from)}")


def _model_dir_and_config(model_dir, config):
    if model_dir is not None:
        model_dir = os.fspath(model_dir)
    if model_dir is not None and config.model_dir is not None and model_dir != config.model_dir:
        raise ValueError(f"`model_dir` are set both in constructor and `RunConfig`, but with different values. In "
                         f"constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' ")
    model_dir = model_dir or config.model_dir
    if not model_dir:
        model_dir = tempfile.mkdtemp()
        _log.warning("Using temporary folder as model directory: %s", model_dir)
    return model_dir, config.replace(model_dir=model_dir)


def _load_global_step_from_checkpoint_dir(checkpoint_dir):
    try:
        return int(checkpoint_utils.load_variable(checkpoint_dir, "global_step"))
    except Exception:  # noqa: BLE001 - no checkpoint (or no step in it): training starts at 0, as in TF
        return 0


class Estimator:
    """Trains, evaluates and predicts with ``model_fn(features, labels, mode, params, config)`` (labels, mode,
    params and config optional, found by name) on input from ``input_fn``s, keeping checkpoints and summaries
    in ``model_dir``."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if config is None:
            config = RunConfig()
            _log.info("Using default config.")
        elif not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
        self._model_dir, self._config = _model_dir_and_config(model_dir, config)
        _log.info("Using config: %s", self._config)
        self._session_config = self._config.session_config
        if self._session_config is None:
            self._session_config = ConfigProto(allow_soft_placement=True)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        util.verify_model_fn_args(model_fn, params, _log)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = _warm_start_settings(warm_start_from)

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: copy.deepcopy(self._config))
    params = property(lambda self: copy.deepcopy(self._params))

    @property
    def model_fn(self):
        """The model_fn, callable as ``model_fn(features, labels, mode, config)`` whatever arguments it takes."""
        def public_model_fn(features, labels, mode, config):
            return self._call_model_fn(features, labels, mode, config)
        return public_model_fn

    def eval_dir(self, name=None):
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def latest_checkpoint(self):
        return checkpoint_management.latest_checkpoint(self._model_dir)

    def _check_checkpoint_available(self):
        if not self.latest_checkpoint():
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")

    def get_variable_names(self):
        self._check_checkpoint_available()
        return [name for name, _ in checkpoint_utils.list_variables(self._model_dir)]

    def get_variable_value(self, name):
        self._check_checkpoint_available()
        return checkpoint_utils.load_variable(self._model_dir, name)

    # -- building --------------------------------------------------------------------------------------------
    def _call_input_fn(self, input_fn, mode):
        available = {"mode": mode, "params": self.params, "config": self.config}
        with graph_mod.device("/cpu:0"):
            return util.call_with_known_args(input_fn, available)

    def _get_features_and_labels_from_input_fn(self, input_fn, mode):
        return util.parse_input_fn_result(self._call_input_fn(input_fn, mode))

    def _call_model_fn(self, features, labels, mode, config):
        args = util.fn_args(self._model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        available = {"mode": mode, "params": self.params, "config": config}
        kwargs.update({k: v for k, v in available.items() if k in args})
        _log.info("Calling model_fn.")
        spec = self._model_fn(features=features, **kwargs)
        _log.info("Done calling model_fn.")
        if not isinstance(spec, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return spec

    def _new_graph(self):
        graph = graph_mod.Graph()
        with graph.as_default():
            random_seed.set_random_seed(self._config.tf_random_seed)
            step = training_util.create_global_step(graph)
            if step.dtype.base_dtype != dtypes.int64:
                raise TypeError(f"the global step must be int64, got {step.dtype}")
        return graph, step

    # -- training --------------------------------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains for ``steps`` more steps, up to global step ``max_steps``, or until input_fn's data ends."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and max_steps <= _load_global_step_from_checkpoint_dir(self._model_dir):
            _log.info("Skipping training since max_steps has already saved.")
            return self
        hooks = util.check_hooks_type(hooks)
        if steps is not None or max_steps is not None:
            hooks.append(hooks_lib.StopAtStepHook(num_steps=steps, last_step=max_steps))
        saving_listeners = util.check_listeners_type(saving_listeners)
        graph, global_step = self._new_graph()
        with graph.as_default():
            features, labels, input_hooks = self._get_features_and_labels_from_input_fn(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
            loss = self._train_with_spec(spec, global_step, input_hooks + hooks, saving_listeners)
        _log.info("Loss for final step: %s.", loss)
        return self

    def _train_with_spec(self, spec, global_step, worker_hooks, saving_listeners):
        if self._warm_start_settings:
            _log.info("Warm-starting with WarmStartSettings: %s", self._warm_start_settings)
            warm_starting.warm_start(*self._warm_start_settings)
        summary = get_registries().api.get("summary")
        if summary is not None and not any(
                s.op.name == "loss" for s in graph_mod.get_collection(graph_mod.GraphKeys.SUMMARIES)):
            summary.scalar("loss", spec.loss)
        graph_mod.add_to_collection(graph_mod.GraphKeys.LOSSES, spec.loss)
        worker_hooks = list(worker_hooks) + [hooks_lib.NanTensorHook(spec.loss)]
        if self._config.log_step_count_steps is not None:
            # TF logs the step its ref variable holds when the run ends, after train_op's increment
            with graph_mod.control_dependencies([spec.train_op]):
                step_after = identity(global_step.read_value(), name="global_step_after_train_op")
            worker_hooks.append(hooks_lib.LoggingTensorHook({"loss": spec.loss, "step": step_after},
                                                            every_n_iter=self._config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        if not (spec.scaffold.saver or graph_mod.get_collection(graph_mod.GraphKeys.SAVERS)):
            graph_mod.add_to_collection(graph_mod.GraphKeys.SAVERS, Saver(
                sharded=True, max_to_keep=self._config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours, defer_build=True,
                save_relative_paths=True))
        chief_hooks = []
        saver_hooks = [h for h in worker_hooks + list(spec.training_chief_hooks)
                       if isinstance(h, hooks_lib.CheckpointSaverHook)]
        if self._config.save_checkpoints_secs or self._config.save_checkpoints_steps:
            if not saver_hooks:
                _log.info("Create CheckpointSaverHook.")
                chief_hooks = [hooks_lib.CheckpointSaverHook(
                    self._model_dir, save_secs=self._config.save_checkpoints_secs,
                    save_steps=self._config.save_checkpoints_steps, scaffold=spec.scaffold)]
                saver_hooks = chief_hooks
        if saving_listeners:
            if not saver_hooks:
                raise ValueError("There should be a CheckpointSaverHook to use saving_listeners. Please set one of "
                                 "the RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs.")
            for listener in saving_listeners:
                if listener not in saver_hooks[0]._listeners:
                    saver_hooks[0]._listeners.append(listener)
        # is_chief is left to MonitoredTrainingSession: outside a job it is the chief; an MPI rank other than
        # the chief initializes its own model (the broadcast hook then copies the chief's) and writes nothing.
        with MonitoredTrainingSession(
                master=self._config.master, checkpoint_dir=self._model_dir, scaffold=spec.scaffold,
                hooks=worker_hooks, chief_only_hooks=tuple(chief_hooks) + tuple(spec.training_chief_hooks),
                save_checkpoint_secs=0, save_summaries_steps=self._config.save_summary_steps,
                config=self._session_config, max_wait_secs=self._config.session_creation_timeout_secs,
                log_step_count_steps=self._config.log_step_count_steps) as session:
            loss, any_step_done = None, False
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
                any_step_done = True
        if not any_step_done:
            _log.warning("Training with estimator made no steps. Perhaps input is empty or misspecified.")
        return loss

    # -- evaluation ------------------------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Runs the eval_metric_ops (and the mean loss) over input_fn's data, or ``steps`` batches of it; the
        results (with ``global_step``) are returned and written as summaries under ``eval_dir(name)``."""
        hooks = util.check_hooks_type(hooks)
        if steps is not None:
            if steps <= 0:
                raise ValueError(f"Must specify steps > 0, given: {steps}")
            hooks.append(evaluation.StopAfterNEvalsHook(num_evals=steps))
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                _log.info("Could not find trained model in model_dir: %s, running initialization to evaluate.",
                          self._model_dir)
        graph, global_step = self._new_graph()
        with graph.as_default():
            features, labels, input_hooks = self._get_features_and_labels_from_input_fn(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
            update_op, eval_dict = evaluation.metric_ops(spec, global_step)
            all_hooks = input_hooks + hooks + list(spec.evaluation_hooks)
            results = evaluation.evaluate_once(checkpoint_path, spec.scaffold, update_op, eval_dict, all_hooks,
                                               self._config.master, self._session_config)
        evaluation.write_dict_to_summary(self.eval_dir(name), results, results["global_step"])
        return results

    # -- prediction ------------------------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """Yields the model's predictions over input_fn's features: one example at a time (a dict when the
        model predicts a dict), or whole batches with ``yield_single_examples=False``."""
        hooks = util.check_hooks_type(hooks)
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                _log.info("Could not find trained model in model_dir: %s, running initialization to predict.",
                          self._model_dir)
        graph, _ = self._new_graph()
        with graph.as_default():
            features, _, input_hooks = self._get_features_and_labels_from_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            predictions = _extract_keys(spec.predictions, predict_keys)
            creator = ChiefSessionCreator(checkpoint_filename_with_path=checkpoint_path, master=self._config.master,
                                          scaffold=spec.scaffold, config=self._session_config)
            all_hooks = input_hooks + hooks + list(spec.prediction_hooks)
            with MonitoredSession(session_creator=creator, hooks=all_hooks) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(predictions, dict):
                        yield from values
                    else:
                        for i in range(_batch_length(values)):
                            yield {key: value[i] for key, value in values.items()}

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                           checkpoint_path=None, experimental_mode=ModeKeys.PREDICT):
        """Writes the PREDICT graph fed by ``serving_input_receiver_fn`` and the newest (or the given)
        checkpoint's variables as a SavedModel in a new timestamped folder of ``export_dir_base``."""
        return exporting.export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                            checkpoint_path, experimental_mode)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                          checkpoint_path=None, strip_default_attrs=False):
        """TF 1.x's older name for ``export_saved_model``."""
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                       checkpoint_path)


def _extract_keys(predictions, predict_keys):
    if not predict_keys:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    existing_keys = predictions.keys()
    chosen = {key: value for key, value in predictions.items() if key in predict_keys}
    if not chosen:
        raise ValueError(f"Expected to run at least one output from {existing_keys}, provided {predict_keys}.")
    return chosen


def _batch_length(values):
    length = None
    for key, value in values.items():
        length = length or value.shape[0]
        if value.shape[0] != length:
            raise ValueError(f"Batch length of predictions should be same. {key} has different batch length than "
                             f"others.")
    return length
