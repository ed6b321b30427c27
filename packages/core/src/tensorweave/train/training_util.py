"""The global step: the int64 variable counting training steps, which hooks, savers and schedules read."""

import logging

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor import Tensor
from tensorweave.ops import init_ops, variable_scope
from tensorweave.ops.variables import Variable

__all__ = ["assert_global_step", "create_global_step", "get_global_step", "get_or_create_global_step",
           "global_step"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


def global_step(sess, global_step_tensor):
    """The current value of ``global_step_tensor`` as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor):
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor!r}.')
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: {global_step_tensor.dtype.name}')
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def get_global_step(graph=None):
    """The global step of ``graph`` (its GLOBAL_STEP collection, else a variable named global_step), or None."""
    graph = graph or graph_mod.get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        _log.error("Multiple tensors in global_step collection.")
        return None
    if found:
        step = found[0]
    else:
        named = [v for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES) if v.name == "global_step:0"]
        if not named:
            return None
        step = named[0]
    assert_global_step(step)
    return step


def create_global_step(graph=None):
    """Makes the int64 scalar variable ``global_step`` (starting at 0, not trainable)."""
    graph = graph or graph_mod.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        root = variable_scope.VariableScope(False)
        return root.get_variable(variable_scope._variable_store(graph), GraphKeys.GLOBAL_STEP, shape=[],
                                 dtype=dtypes.int64, initializer=init_ops.zeros_initializer(), trainable=False,
                                 collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    graph = graph or graph_mod.get_default_graph()
    step = get_global_step(graph)
    return create_global_step(graph) if step is None else step
