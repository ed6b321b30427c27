"""One evaluation pass of an Estimator: metric update ops run batch after batch on a session restored from a
checkpoint (counted by a local ``eval_step``), their values read at the end and written as summaries."""

import logging
import math
import time

import numpy as np

from tensorweave import dtypes
from tensorweave.estimator.model_fn import LOSS_METRIC_KEY
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.registry import get_registries
from tensorweave.metrics import mean
from tensorweave.ops import init_ops
from tensorweave.ops.array_ops import identity
from tensorweave.ops.control_flow_ops import group
from tensorweave.ops.state_ops import assign_add
from tensorweave.ops.variable_scope import get_variable
from tensorweave.protos.summary import Summary
from tensorweave.train.basic_session_run_hooks import FinalOpsHook
from tensorweave.train.monitored_session import ChiefSessionCreator, MonitoredSession
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook

_log = logging.getLogger("tensorflow")
EVAL_STEP = "eval_step"


def get_or_create_eval_step():
    """The local int64 variable counting evaluation batches (collection ``eval_step``)."""
    steps = graph_mod.get_collection(EVAL_STEP)
    if len(steps) == 1:
        return steps[0]
    if len(steps) > 1:
        raise ValueError("Multiple tensors added to tf.GraphKeys.EVAL_STEP")
    return get_variable("eval_step", shape=[], dtype=dtypes.int64, initializer=init_ops.zeros_initializer(),
                        trainable=False, collections=[graph_mod.GraphKeys.LOCAL_VARIABLES, EVAL_STEP])


class StopAfterNEvalsHook(SessionRunHook):
    """Stops an evaluation after ``num_evals`` batches, logging ``Evaluation [i/n]`` about ten times."""

    def __init__(self, num_evals, log_progress=True):
        self._num_evals = num_evals
        self._evals_completed = None
        self._log_progress = log_progress
        self._log_frequency = 1 if (num_evals is None or num_evals < 20) else math.floor(num_evals / 10.0)

    def _set_evals_completed_tensor(self, updated_eval_step):
        self._evals_completed = updated_eval_step

    def before_run(self, run_context):
        return SessionRunArgs({"evals_completed": self._evals_completed})

    def after_run(self, run_context, run_values):
        done = int(run_values.results["evals_completed"])
        if self._log_progress:
            if self._num_evals is None:
                _log.info("Evaluation [%d]", done)
            elif done % self._log_frequency == 0 or done == self._num_evals:
                _log.info("Evaluation [%d/%d]", done, self._num_evals)
        if self._num_evals is not None and done >= self._num_evals:
            run_context.request_stop()


def metric_ops(spec, global_step):
    """(one op updating every metric, name -> value tensor) for an EVAL spec, with the mean loss as ``loss`` and
    the global step as ``global_step``."""
    if LOSS_METRIC_KEY in spec.eval_metric_ops:
        raise ValueError(f'Metric with name "{LOSS_METRIC_KEY}" is not allowed, because Estimator already defines a '
                         f'default metric with the same name.')
    metrics = dict(spec.eval_metric_ops)
    metrics[LOSS_METRIC_KEY] = mean(spec.loss)
    values, updates = {}, []
    for name, (value_op, update_op) in sorted(metrics.items()):
        values[name] = value_op
        updates.append(update_op)
    if graph_mod.GraphKeys.GLOBAL_STEP in values:
        raise ValueError("Metric with name `global_step` is not allowed, because Estimator already defines a default "
                         "metric with the same name.")
    values[graph_mod.GraphKeys.GLOBAL_STEP] = global_step
    return group(*updates), values


def evaluate_once(checkpoint_path, scaffold, eval_ops, final_ops, hooks, master, config):
    """Runs ``eval_ops`` until the input ends or a hook stops, then returns ``final_ops``' values."""
    eval_step = get_or_create_eval_step()
    eval_ops = [eval_ops, assign_add(eval_step, 1, use_locking=True)]
    with graph_mod.control_dependencies(eval_ops):
        eval_step_value = identity(eval_step.read_value())
    hooks = list(hooks)
    for hook in hooks:
        if isinstance(hook, StopAfterNEvalsHook):
            hook._set_evals_completed_tensor(eval_step_value)
    _log.info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime()))
    start = time.time()
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_filename_with_path=checkpoint_path, master=master,
                                  config=config)
    final_hook = FinalOpsHook(final_ops)
    hooks.append(final_hook)
    with MonitoredSession(session_creator=creator, hooks=hooks) as session:
        while not session.should_stop():
            session.run(eval_ops)
    _log.info("Inference Time : %.5fs", time.time() - start)
    _log.info("Finished evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime()))
    return final_hook.final_ops_values


def _dict_to_str(dictionary):
    return ", ".join("%s = %s" % (k, v) for k, v in sorted(dictionary.items()) if not isinstance(v, bytes))


def write_dict_to_summary(output_dir, dictionary, current_global_step):
    """Logs the results and writes the scalar ones as one Summary at ``current_global_step`` into
    ``output_dir`` (through the dashboard package's FileWriterCache, when it is installed)."""
    _log.info("Saving dict for global step %d: %s", current_global_step, _dict_to_str(dictionary))
    summary = get_registries().api.get("summary")
    if summary is None:
        _log.info("Not writing evaluation summaries into %s: tensorweave[board] is not installed", output_dir)
        return
    proto = Summary()
    for key, value in dictionary.items():
        if value is None or key == "global_step":
            continue
        if isinstance(value, (float, np.float32)):
            proto.value.add(tag=key, simple_value=float(value))
        elif isinstance(value, (int, np.int64, np.int32)):
            proto.value.add(tag=key, simple_value=int(value))
        elif isinstance(value, bytes):
            try:
                parsed = Summary.FromString(value)
            except Exception:  # noqa: BLE001 - TF skips a string that is no Summary, with this warning
                _log.warning("Skipping summary for %s, cannot parse string to Summary.", key)
                continue
            for i, parsed_value in enumerate(parsed.value):
                parsed_value.tag = f"{key}/{i}"
            proto.value.extend(parsed.value)
        else:
            _log.warning("Skipping summary for %s, must be a float, np.float32, np.int64, np.int32 or int or a "
                         "serialized string of Summary.", key)
    writer = summary.FileWriterCache.get(output_dir)
    writer.add_summary(proto, int(current_global_step))
    writer.flush()
