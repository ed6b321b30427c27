"""``tf.estimator.add_metrics``: an Estimator like another whose evaluation also runs ``metric_fn``'s metrics."""

from tensorweave.estimator import util
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.model_fn import ModeKeys

__all__ = ["add_metrics"]

_VALID_METRIC_FN_ARGS = {"features", "labels", "predictions", "config"}


def add_metrics(estimator, metric_fn):
    """A new Estimator (same model_dir, config and warm start) whose EVAL spec has ``metric_fn(features, labels,
    predictions, config)``'s ``{name: (value, update_op)}`` added, overriding metrics of the same name."""
    invalid = sorted(set(util.fn_args(metric_fn)) - _VALID_METRIC_FN_ARGS)
    if invalid:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: {invalid}")

    def new_model_fn(features, labels, mode, config):
        spec = estimator.model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        available = {"features": features, "labels": labels, "predictions": spec.predictions, "config": config}
        all_metrics = dict(spec.eval_metric_ops or {})
        all_metrics.update(util.call_with_known_args(metric_fn, available))
        return spec._replace(eval_metric_ops=all_metrics)

    return Estimator(model_fn=new_model_fn, model_dir=estimator.model_dir, config=estimator.config,
                     warm_start_from=estimator._warm_start_settings)
