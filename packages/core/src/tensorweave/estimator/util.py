"""What the Estimator does with user functions: which arguments a model_fn/input_fn takes, and what an
input_fn's result means (a tf.data Dataset, a (features, labels) pair, or features alone)."""

import functools
import inspect

from tensorweave.data.dataset_ops import Dataset
from tensorweave.train.basic_session_run_hooks import CheckpointSaverListener
from tensorweave.train.session_run_hook import SessionRunHook

_VALID_MODEL_FN_ARGS = {"features", "labels", "mode", "params", "self", "config"}


def fn_args(fn):
    """The names of ``fn``'s arguments, without those a functools.partial already bound (TF's function_utils)."""
    if isinstance(fn, functools.partial):
        args = fn_args(fn.func)
        return tuple(a for a in args[len(fn.args):] if a not in (fn.keywords or {}))
    if not inspect.isfunction(fn) and not inspect.ismethod(fn) and callable(fn):
        fn = fn.__call__
    params = inspect.signature(fn).parameters.values()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def verify_model_fn_args(model_fn, params, log):
    args = set(fn_args(model_fn))
    if "features" not in args:
        raise ValueError(f"model_fn ({model_fn}) must include features argument.")
    if params is not None and "params" not in args:
        raise ValueError(f"model_fn ({model_fn}) does not include params argument, but params ({params}) is passed "
                         f"to Estimator.")
    if params is None and "params" in args:
        log.warning("Estimator's model_fn (%s) includes params argument, but params are not passed to Estimator.",
                    model_fn)
    unexpected = sorted(args - _VALID_MODEL_FN_ARGS)
    if unexpected:
        raise ValueError(f"model_fn ({model_fn}) has following not expected args: {unexpected}")


def call_with_known_args(fn, available):
    """Calls ``fn`` with those of ``available`` (name -> value) its signature names."""
    names = fn_args(fn)
    return fn(**{k: v for k, v in available.items() if k in names})


class DatasetInitializerHook(SessionRunHook):
    """Runs an input_fn's Dataset iterator initializer once the session exists."""

    def __init__(self, iterator):
        self._iterator = iterator

    def begin(self):
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


def parse_input_fn_result(result):
    """(features, labels, input_hooks) from what an input_fn returned."""
    hooks = []
    if isinstance(result, Dataset):
        iterator = result.make_initializable_iterator()
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return result[0], result[1], hooks
    return result, None, hooks


def check_listeners_type(saving_listeners):
    listeners = list(saving_listeners or [])
    for listener in listeners:
        if not isinstance(listener, CheckpointSaverListener):
            raise TypeError(f"saving_listeners must be a list of CheckpointSaverListener, given: {listener}")
    return listeners


def check_hooks_type(hooks):
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"Hooks must be a SessionRunHook, given: {hook}")
    return hooks
