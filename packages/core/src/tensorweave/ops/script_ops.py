"""Python functions as graph ops: ``tf.py_func`` and ``tf.numpy_function`` (PyFunc, PyFuncStateless).

The graph records only a token (``pyfunc_<n>``); the function lives in this process's registry, as in TF, so a
GraphDef holding a py_func runs again wherever the registry still holds the token (re-imported in the same
process) and fails with TF's message elsewhere. The graph that made the op keeps its function alive. The
kernel (CPU only: the function needs the GIL and host numpy arrays) calls ``call_py_func``.
"""

import itertools
import threading
import weakref

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import create_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = ["py_func", "numpy_function"]

_SPEC = dict(inputs=["input: Tin"], outputs=["output: Tout"],
             attrs=["token: string", "Tin: list(type) >= 0", "Tout: list(type) >= 0"], grad=NOT_DIFFERENTIABLE)
PY_FUNC = DEFS.define("PyFunc", is_stateful=True, doc="Calls the Python function registered under ``token``.",
                      **_SPEC)
PY_FUNC_STATELESS = DEFS.define("PyFuncStateless", doc="PyFunc for a function without side effects (may be "
                                "folded or merged with an equal op).", **_SPEC)


@PY_FUNC.set_shape_fn
@PY_FUNC_STATELESS.set_shape_fn
def _unknown_shapes(op):
    return [tensor_shape.TensorShape(None) for _ in op.outputs]


class _FuncRegistry:
    """token -> function; the functions are held weakly here and strongly by the graphs that use them."""

    def __init__(self):
        self._funcs = weakref.WeakValueDictionary()
        self._keep_alive = weakref.WeakKeyDictionary()  # graph -> its functions
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def insert(self, func, graph):
        with self._lock:
            token = f"pyfunc_{next(self._ids)}"
            holder = _Holder(func)
            self._funcs[token] = holder
            self._keep_alive.setdefault(graph, []).append(holder)
        return token

    def lookup(self, token):
        holder = self._funcs.get(token)
        if holder is None:
            raise ValueError(f"Could not find callback with key={token} in the registry.")
        return holder.func


class _Holder:
    """A weak-referenceable box (bound methods and builtins are not)."""

    __slots__ = ("func", "__weakref__")

    def __init__(self, func):
        self.func = func


_REGISTRY = _FuncRegistry()


def call_py_func(token, args):
    """Runs the function of ``token`` on numpy ``args``; its results as a list of numpy arrays (TF's rules: a
    list or tuple is several results, bytes or str one string; str becomes UTF-8 bytes)."""
    result = _REGISTRY.lookup(token)(*args)
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return [_as_array(r) for r in result]
    return [_as_array(result)]


def _as_array(value):
    arr = np.asarray(value, order="C")
    if arr.dtype.kind == "U":
        flat = [s.encode("utf-8") for s in arr.reshape(-1).tolist()]
        return np.array(flat, dtype=object).reshape(arr.shape) if arr.ndim else np.array(flat[0], dtype=object)
    if arr.dtype.kind == "S":
        return arr.astype(object)
    return arr


def _py_func(func, inp, Tout, stateful, name):  # noqa: N803 - TF's names
    if not callable(func):
        raise TypeError(f"py_func expects a callable, got {func!r}")
    single = not isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    inputs = [convert_to_tensor(x) for x in inp]
    graph = graph_mod.get_default_graph()
    token = _REGISTRY.insert(func, graph)
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    op = create_op(op_type, [inputs], {"token": token, "Tout": tout}, name=name or op_type)
    if not tout:
        return op
    return op.outputs[0] if single else list(op.outputs)


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF's names
    """Wraps ``func`` (numpy arrays in, numpy arrays out) as an op; ``Tout`` a dtype (one tensor back) or a list
    of dtypes (a list back). Results have unknown shapes; strings arrive as bytes. No gradient unless one is
    given with ``gradient_override_map({"PyFunc": ...})``."""
    return _py_func(func, inp, Tout, stateful, name)


def numpy_function(func, inp, Tout, name=None):  # noqa: N803 - TF's names
    """``py_func`` with ``stateful=True`` (TF 1.15's ``tf.numpy_function``)."""
    return _py_func(func, inp, Tout, True, name)
