"""``tf.estimator.RunConfig``: where an Estimator writes, how often it saves and logs, and its session config."""

import copy

from tensorweave.runtime.config import ConfigProto
from tensorweave.train.server_lib import ClusterSpec, task_role

__all__ = ["RunConfig"]

_USE_DEFAULT = object()
_REPLACEABLE = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
                "session_config", "keep_checkpoint_max", "keep_checkpoint_every_n_hours", "log_step_count_steps",
                "train_distribute", "device_fn", "protocol", "eval_distribute", "experimental_distribute",
                "experimental_max_worker_delay_secs", "session_creation_timeout_secs")


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _non_negative(name, value):
    if value is not None and value < 0:
        raise ValueError(f"{name} should be >= 0")


class RunConfig:
    """The run settings of an Estimator (TF 1.15's arguments and defaults). Saving every 600 seconds is the
    default unless ``save_checkpoints_steps`` is given; giving both is an error."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT, session_config=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_steps and save_checkpoints_secs.")
        if model_dir is not None and not model_dir:
            raise ValueError("model_dir should be non-empty")
        for name, value in (("save_summary_steps", save_summary_steps),
                            ("save_checkpoints_steps", save_checkpoints_steps),
                            ("save_checkpoints_secs", save_checkpoints_secs),
                            ("keep_checkpoint_max", keep_checkpoint_max),
                            ("log_step_count_steps", log_step_count_steps)):
            _non_negative(name, value)
        if keep_checkpoint_every_n_hours is not None and keep_checkpoint_every_n_hours <= 0:
            raise ValueError("keep_checkpoint_every_n_hours should be > 0")
        if session_config is not None and not isinstance(session_config, ConfigProto):
            raise ValueError("session_config must be instance of ConfigProto")
        if tf_random_seed is not None and not isinstance(tf_random_seed, int):
            raise ValueError("tf_random_seed must be integer.")
        self._model_dir = model_dir
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = train_distribute
        self._device_fn = device_fn
        self._protocol = protocol
        self._eval_distribute = eval_distribute
        self._experimental_distribute = experimental_distribute
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._cluster_spec = ClusterSpec({})
        self._task_type, self._task_id, self._global_id_in_cluster = TaskType.WORKER, 0, 0
        self._master = self._evaluation_master = ""
        self._num_ps_replicas, self._num_worker_replicas = 0, 1
        role = task_role()  # an MPI rank other than the chief trains but leaves writing to the chief
        self._is_chief = True if role is None else bool(role[0])

    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: self._train_distribute)
    eval_distribute = property(lambda self: self._eval_distribute)
    device_fn = property(lambda self: self._device_fn)
    protocol = property(lambda self: self._protocol)
    experimental_distribute = property(lambda self: self._experimental_distribute)
    experimental_max_worker_delay_secs = property(lambda self: self._experimental_max_worker_delay_secs)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    cluster_spec = property(lambda self: self._cluster_spec)
    task_type = property(lambda self: self._task_type)
    task_id = property(lambda self: self._task_id)
    global_id_in_cluster = property(lambda self: self._global_id_in_cluster)
    master = property(lambda self: self._master)
    evaluation_master = property(lambda self: self._evaluation_master)
    is_chief = property(lambda self: self._is_chief)
    num_ps_replicas = property(lambda self: self._num_ps_replicas)
    num_worker_replicas = property(lambda self: self._num_worker_replicas)

    def replace(self, **kwargs):
        """A copy with the given properties changed; naming one of save_checkpoints_steps/secs clears the other."""
        for key in kwargs:
            if key not in _REPLACEABLE:
                raise ValueError(f"{key} is not supported by RunConfig.replace. Allowed properties: "
                                 f"{sorted(_REPLACEABLE)}")
        if kwargs.get("save_checkpoints_steps") is not None and kwargs.get("save_checkpoints_secs") is not None:
            raise ValueError("Can not provide both save_checkpoints_steps and save_checkpoints_secs.")
        new = copy.deepcopy(self)
        if kwargs.get("save_checkpoints_steps") is not None:
            new._save_checkpoints_secs = None
        if kwargs.get("save_checkpoints_secs") is not None:
            new._save_checkpoints_steps = None
        settings = {name: getattr(new, name, None) for name in _REPLACEABLE}
        settings.update(kwargs)
        checked = RunConfig(**{k: v for k, v in settings.items()})  # validates the combination
        for name in _REPLACEABLE:
            setattr(new, f"_{name}", getattr(checked, f"_{name}"))
        return new

    def __repr__(self):
        return repr({k: v for k, v in vars(self).items()})
