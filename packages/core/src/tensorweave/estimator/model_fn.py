"""``tf.estimator.ModeKeys`` and ``EstimatorSpec``: what a model_fn returns, checked as TF 1.15 checks it."""

import collections

from tensorweave.estimator.export import export_output
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.framework.operation import Operation
from tensorweave.ops.shape_ops import reshape
from tensorweave.train.monitored_session import Scaffold
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["EstimatorSpec", "ModeKeys"]

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"


class ModeKeys:
    """The three modes a model_fn is called in."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_SPEC_FIELDS = ["mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
                "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks"]


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _SPEC_FIELDS)):
    """The ops and objects a model_fn returns for one mode; missing pieces the mode needs are errors here,
    where the model_fn's author sees them, rather than in the middle of training."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
                training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None,
                prediction_hooks=None):
        train_op = _validate_train_op(train_op, mode)
        loss = _validate_loss(loss, mode)
        predictions = _validate_predictions(predictions, mode)
        export_outputs = _validate_export_outputs(export_outputs, predictions, mode)
        scaffold = scaffold or Scaffold()
        if not isinstance(scaffold, Scaffold):
            raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
        eval_metric_ops = _validate_eval_metric_ops(eval_metric_ops)
        return super().__new__(
            cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op, eval_metric_ops=eval_metric_ops,
            export_outputs=export_outputs, training_chief_hooks=_validate_hooks(training_chief_hooks),
            training_hooks=_validate_hooks(training_hooks), scaffold=scaffold,
            evaluation_hooks=_validate_hooks(evaluation_hooks), prediction_hooks=_validate_hooks(prediction_hooks))

    def _replace(self, **kwds):
        if "mode" in kwds and self.mode != kwds["mode"]:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        return EstimatorSpec(**dict(self._asdict(), **kwds))


def _check_in_default_graph(x, what, label=None):
    """TF's message for a tensor or op of another graph (built outside model_fn, or by an earlier call)."""
    graph = getattr(x, "graph", None)
    if graph is not None and graph is not graph_mod.get_default_graph():
        label = label or getattr(x, "name", x)
        raise ValueError(f'{what} with "{label}" must be from the default graph. Possible causes of this error '
                         f'include: \n\n1) {what} was created outside the context of the default graph.\n\n2) The '
                         f'object passed through to EstimatorSpec was not created in the most recent call to '
                         f'"model_fn".')


def _check_is_tensor(x, name):
    if not isinstance(x, Tensor) and hasattr(x, "value") and callable(getattr(x, "read_value", None)):
        x = x.value()  # a Variable stands for its value, as TF converts it
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be Tensor, given: {x}")
    return x


def _validate_train_op(train_op, mode):
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    if not isinstance(train_op, (Tensor, Operation)) and isinstance(getattr(train_op, "op", None), Operation):
        train_op = train_op.op  # a Variable (or anything with an op): TF takes its op
    if not isinstance(train_op, (Tensor, Operation)):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op}")
    _check_in_default_graph(train_op, "train_op")
    return train_op


def _validate_loss(loss, mode):
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    loss = _check_is_tensor(loss, "loss")
    _check_in_default_graph(loss, "loss")
    shape = loss.get_shape()
    if shape.num_elements() not in (None, 1):
        raise ValueError(f"Loss must be scalar, given: {loss}")
    if not shape.is_compatible_with(TensorShape([])):
        loss = reshape(loss, [])
    return loss


def _validate_predictions(predictions, mode):
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        predictions = {k: _check_is_tensor(v, f"predictions[{k}]") for k, v in predictions.items()}
        for key, value in predictions.items():
            _check_in_default_graph(value, "prediction values", f"{key}: {value.name}")
        return predictions
    predictions = _check_is_tensor(predictions, "predictions")
    _check_in_default_graph(predictions, "prediction values")
    return predictions


def _validate_export_outputs(export_outputs, predictions, mode):
    if mode != ModeKeys.PREDICT:
        return export_outputs
    return export_output.get_export_outputs(export_outputs, predictions)


def _validate_hooks(hooks):
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
    return hooks


def _validate_eval_metric_ops(eval_metric_ops):
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops}")
    for key, value in eval_metric_ops.items():
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) tuples, given: {value} for "
                            f"key: {key}")
        for part in value:
            _check_in_default_graph(part, "eval_metric_ops", f"{key}: {getattr(part, 'name', part)}")
    return eval_metric_ops
