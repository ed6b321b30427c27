"""``tf.estimator.Exporter`` and the two TF 1.15 ships for ``EvalSpec(exporters=...)``: ``FinalExporter``
(exports once, after the last evaluation) and ``LatestExporter`` (exports after each evaluation and keeps
the newest ``exports_to_keep``)."""

import logging
import os
import shutil

__all__ = ["Exporter", "FinalExporter", "LatestExporter"]

_log = logging.getLogger("tensorflow")


class Exporter:
    """Writes a model out after an evaluation; ``name`` is its folder under ``<model_dir>/export``."""

    @property
    def name(self):
        raise NotImplementedError(f"{type(self).__name__} must define name")

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        raise NotImplementedError(f"{type(self).__name__} must define export")


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        if not name:
            raise ValueError("An Exporter cannot have a name that is `None` or empty.")
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra, self._as_text = assets_extra, as_text

    @property
    def name(self):
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        return estimator.export_saved_model(export_path, self._serving_input_receiver_fn,
                                            assets_extra=self._assets_extra, as_text=self._as_text,
                                            checkpoint_path=checkpoint_path)


class FinalExporter(_SavedModelExporter):
    """Exports a SavedModel only after the evaluation at the end of training."""

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if not is_the_final_export:
            return None
        _log.info("Performing the final export in the end of training.")
        return super().export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)


class LatestExporter(_SavedModelExporter):
    """Exports a SavedModel after every evaluation, deleting all but the newest ``exports_to_keep``."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError("`exports_to_keep`, if provided, must be a positive number. Got %s" % exports_to_keep)
        self._exports_to_keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        result = super().export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)
        if self._exports_to_keep is not None and os.path.isdir(export_path):
            exports = sorted(d for d in os.listdir(export_path) if d.isdigit())
            for stale in exports[:-self._exports_to_keep]:
                shutil.rmtree(os.path.join(export_path, stale), ignore_errors=True)
        return result
