"""``tf.train``: optimizers, learning-rate schedules, checkpoints, input pipelines, session hooks,
and distributed training (cluster, servers, device setters, synchronous replicas)."""

from tensorweave.framework.registry import get_registries as _get_registries
from tensorweave.protos.example import (  # noqa: F401
    BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List, SequenceExample,
)
from tensorweave.train.adadelta import *  # noqa: F401,F403
from tensorweave.train.adagrad import *  # noqa: F401,F403
from tensorweave.train.adagrad_da import *  # noqa: F401,F403
from tensorweave.train.adam import *  # noqa: F401,F403
from tensorweave.train.basic_session_run_hooks import *  # noqa: F401,F403
from tensorweave.train.checkpoint_management import *  # noqa: F401,F403
from tensorweave.train.checkpoint_utils import *  # noqa: F401,F403
from tensorweave.train.coordinator import *  # noqa: F401,F403
from tensorweave.train.device_setter import *  # noqa: F401,F403
from tensorweave.train.ftrl import *  # noqa: F401,F403
from tensorweave.train.gradient_descent import *  # noqa: F401,F403
from tensorweave.train.input import *  # noqa: F401,F403
from tensorweave.train.learning_rate_decay import *  # noqa: F401,F403
from tensorweave.train.meta_graph import *  # noqa: F401,F403
from tensorweave.train.momentum import *  # noqa: F401,F403
from tensorweave.train.moving_averages import *  # noqa: F401,F403
from tensorweave.train.monitored_session import *  # noqa: F401,F403
from tensorweave.train.optimizer import *  # noqa: F401,F403
from tensorweave.train.proximal import *  # noqa: F401,F403
from tensorweave.train.queue_runner import *  # noqa: F401,F403
from tensorweave.train.rmsprop import *  # noqa: F401,F403
from tensorweave.train.saver import *  # noqa: F401,F403
from tensorweave.train.server_lib import *  # noqa: F401,F403
from tensorweave.train.session_manager import *  # noqa: F401,F403
from tensorweave.train.session_run_hook import *  # noqa: F401,F403
from tensorweave.train.summary_iterator import *  # noqa: F401,F403
from tensorweave.train.sync_replicas_optimizer import *  # noqa: F401,F403
from tensorweave.train.training_util import *  # noqa: F401,F403
from tensorweave.train.warm_starting import *  # noqa: F401,F403


def __getattr__(name):
    # Plugins add names here through the API hook (``registrar.add_module("train.<name>", obj)``): TF1's
    # tf.train.SummarySaverHook comes from the dashboard package, which the core does not depend on.
    found = _get_registries().api.get(f"train.{name}")
    if found is not None:
        return found
    if name == "SummarySaverHook":
        raise ImportError("tf.train.SummarySaverHook needs tensorweave[board] (the tensorboard-lite package): "
                          "pip install tensorweave[board]")
    raise AttributeError(f"module 'tensorweave.train' has no attribute {name!r}")
