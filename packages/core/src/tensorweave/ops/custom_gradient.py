"""``tf.custom_gradient``: a function that returns ``(y, grad_fn)`` gets ``grad_fn`` as its gradient.

As in TF 1.15's graph mode: the results, the inputs and the variables the function read pass through one
IdentityN whose gradient is overridden by ``grad_fn``; gradients of the function's own ops are never built.
Variables read inside get gradients from ``grad_fn(*dys, variables=[...])``, which returns
``(input_grads, variable_grads)``.
"""

import functools
import inspect
import itertools
import logging

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, nest
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, gradients_impl

__all__ = ["custom_gradient"]

_ids = itertools.count()
_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


def custom_gradient(f):
    """Decorator: ``f(*tensors)`` returns ``(result, grad_fn)``; ``grad_fn(*result_grads)`` returns one gradient
    per input (with ``variables=``, also a list with one gradient per variable ``f`` read)."""

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        if kwargs:
            raise ValueError("The custom_gradient decorator currently supports keywords arguments only when "
                             "eager execution is enabled.")
        return _graph_mode(f, args)

    return decorated


def _graph_mode(f, args):
    graph = graph_mod.get_default_graph()
    name = f"CustomGradient-{next(_ids)}"
    args = [convert_to_tensor(x) for x in args]
    before = len(graph.get_operations())
    result, grad_fn = f(*args)
    variables = _variables_read(graph, graph.get_operations()[before:], args)
    params = inspect.signature(grad_fn).parameters
    takes_variables = "variables" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if variables and not takes_variables:
        raise TypeError(f"@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function "
                        f"uses variables: {variables}")
    if takes_variables and not variables:
        _log.warning("@custom_gradient grad_fn has 'variables' in signature, but no ResourceVariables were "
                        "used on the forward pass.")
    flat_result = [convert_to_tensor(t) for t in nest.flatten(result)]
    n_results = len(flat_result)

    def grad(op, *result_grads):
        result_grads = result_grads[:n_results]
        if variables:
            input_grads, variable_grads = grad_fn(*result_grads, variables=variables)
            if len(variable_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
        else:
            input_grads, variable_grads = grad_fn(*result_grads), []
        input_grads = nest.flatten(input_grads)
        if len(input_grads) != len(args):
            raise ValueError(f"@custom_gradient grad_fn of {f.__name__} returned {len(input_grads)} gradients for "
                             f"{len(args)} inputs")
        return [None] * n_results + list(input_grads) + list(variable_grads)

    gradients_impl.RegisterGradient(name)(grad)
    with graph.gradient_override_map({"IdentityN": name}):
        passed = array_ops.identity_n(flat_result + args + [convert_to_tensor(v) for v in variables])
    return nest.pack_sequence_as(result, passed[:n_results])


def _variables_read(graph, new_ops, args):
    """The variables whose handles the ops ``f`` built read, in the order first read (TF's tape watches them)."""
    by_handle = {}
    for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES) + graph.get_collection(GraphKeys.LOCAL_VARIABLES):
        by_handle.setdefault(v.handle, v)
    found = []
    for op in new_ops:
        for t in op.inputs:
            v = by_handle.get(t) if t.dtype is dtypes.resource else None
            if v is not None and v not in found and t not in args:
                found.append(v)
    return found
