"""``tf.estimator``: TF 1.15's high-level training API (Estimator, EstimatorSpec, RunConfig, train_and_evaluate,
input_fns over numpy/pandas, SavedModel export) on Tensorweave's monitored sessions and hooks."""

from tensorweave import train as _train
from tensorweave.estimator import export, inputs  # noqa: F401
from tensorweave.estimator.estimator import Estimator, VocabInfo, WarmStartSettings  # noqa: F401
from tensorweave.estimator.extenders import add_metrics  # noqa: F401
from tensorweave.estimator.export.exporter import Exporter, FinalExporter, LatestExporter  # noqa: F401
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys  # noqa: F401
from tensorweave.estimator.run_config import RunConfig  # noqa: F401
from tensorweave.estimator.training import EvalSpec, TrainSpec, train_and_evaluate  # noqa: F401
from tensorweave.train.basic_session_run_hooks import (  # noqa: F401 - TF 1.15 exports these here too
    CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook, GlobalStepWaiterHook, LoggingTensorHook,
    NanLossDuringTrainingError, NanTensorHook, SecondOrStepTimer, StepCounterHook, StopAtStepHook,
)
from tensorweave.train.session_run_hook import (  # noqa: F401
    SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues,
)


def __getattr__(name):
    if name == "SummarySaverHook":  # the dashboard package's, as tf.train.SummarySaverHook
        return _train.SummarySaverHook
    raise AttributeError(f"module 'tensorweave.estimator' has no attribute {name!r}")
