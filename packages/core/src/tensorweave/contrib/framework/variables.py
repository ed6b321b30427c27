"""contrib.framework's variable helpers (slim's): ``variable`` and ``model_variable`` (which also joins
``GraphKeys.MODEL_VARIABLES``, the weights a model is saved and restored by), and the lookups by scope and
suffix, ``get_variables_to_restore`` among them."""

import contextlib

from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import variable_scope as vs, variables
from tensorweave.train.training_util import get_global_step, get_or_create_global_step  # noqa: F401

__all__ = ["add_model_variable", "get_global_step", "get_local_variables", "get_model_variables",
           "get_or_create_global_step", "get_trainable_variables", "get_unique_variable", "get_variables",
           "get_variables_by_name", "get_variables_by_suffix", "get_variables_to_restore", "local_variable",
           "model_variable", "variable"]


@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True, collections=None,
             caching_device=None, device=None, partitioner=None, custom_getter=None, use_resource=None,
             synchronization=None, aggregation=None):
    """``get_variable`` in ``collections`` (GLOBAL_VARIABLES by default), placed on ``device`` if given."""
    collections = list(dict.fromkeys(collections or [GraphKeys.GLOBAL_VARIABLES]))
    with graph_mod.device(device) if device is not None else contextlib.nullcontext():
        return vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                               trainable=trainable, collections=collections, caching_device=caching_device,
                               partitioner=partitioner, custom_getter=custom_getter)


@add_arg_scope
def model_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True,
                   collections=None, caching_device=None, device=None, partitioner=None, custom_getter=None,
                   use_resource=None, synchronization=None, aggregation=None):
    """A ``variable`` that also joins ``GraphKeys.MODEL_VARIABLES``."""
    collections = list(collections or []) + [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                    trainable=trainable, collections=collections, caching_device=caching_device, device=device,
                    partitioner=partitioner, custom_getter=custom_getter)


def local_variable(initial_value, validate_shape=True, name=None, use_resource=None):
    """A non-trainable variable in ``GraphKeys.LOCAL_VARIABLES`` (initialized by local_variables_initializer)."""
    return variables.Variable(initial_value, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def add_model_variable(var):
    if var not in graph_mod.get_collection(GraphKeys.MODEL_VARIABLES):
        graph_mod.add_to_collection(GraphKeys.MODEL_VARIABLES, var)


def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES):
    """The variables of ``collection`` whose names start with ``scope`` (a regex, or a VariableScope) and, with
    ``suffix``, end ``<suffix>:<n>``."""
    if isinstance(scope, vs.VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return graph_mod.get_collection(collection, scope)


def get_model_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None):
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_by_suffix(suffix, scope=None):
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name, scope=None):
    """The variables whose last name component is ``given_name``."""
    return get_variables(scope=scope, suffix=f"/{given_name}:|^{given_name}:")


def get_unique_variable(var_op_name):
    """The one variable named ``var_op_name`` (no ``:0``); ValueError if there is none or several."""
    candidates = get_variables(scope=var_op_name)
    found = [v for v in candidates if v.op.name == var_op_name]
    if not found:
        raise ValueError(f"Couldn't find variable {var_op_name}")
    if len(found) > 1:
        raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")
    return found[0]


def _scopes(value, what):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{what} is provided but is not a list or a tuple.")
    return value


def get_variables_to_restore(include=None, exclude=None):
    """The global variables under any scope of ``include`` (all by default) and under none of ``exclude``: the
    ``var_list`` for a Saver that restores part of a model (e.g. all but the logits of a pretrained network)."""
    if include is None:
        chosen = get_variables()
    else:
        chosen = [v for scope in _scopes(include, "include") for v in get_variables(scope)]
    excluded = set()
    for scope in _scopes(exclude, "exclude") if exclude is not None else ():
        excluded.update(id(v) for v in get_variables(scope))
    return [v for v in chosen if id(v) not in excluded]
