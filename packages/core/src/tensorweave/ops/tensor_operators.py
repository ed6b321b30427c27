"""Python operators on tensors (+ - * / // % ** @, unary - and abs, comparisons, & | ^ ~, indexing).

They are attached to ``Tensor`` when this module is imported (``import tensorweave`` does), with TF1's
meanings: ``/`` is truediv (integers become floats), ``//`` floordiv, ``%`` floormod, ``&``/``|``/``^``/``~``
are logical ops on bool tensors, and ``==`` stays identity so tensors can key feed dicts. Reflected forms
make ``1.0 - t`` and ``ndarray + t`` work. ``attach_operators`` gives the same operators to any class whose
instances convert to tensors (variables, for example).
"""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor import Tensor
from tensorweave.ops import comparison_ops, math_ops, matmul_ops, slicing_ops, sparse_elementwise_ops, unary_math_ops

__all__ = []


def _binary(module, fn_name, scope=None):
    """``scope``: TF1 runs the arithmetic operators in a name scope of the operator's name ("mul"), which names
    the op and its converted operands ("mul/y"); comparisons take the op's own name."""
    def call(x, y, tensor):
        if scope is None:
            return getattr(module, fn_name)(x, y)
        with graph_mod.name_scope(None, scope, [tensor]) as name:
            return getattr(module, fn_name)(x, y, name=name)

    def forward(self, other):
        return call(self, other, self)

    def reflected(self, other):
        return call(other, self, self)

    forward.__name__, reflected.__name__ = fn_name, f"r{fn_name}"
    return forward, reflected


def _unary(module, fn_name):
    def apply(self):
        return getattr(module, fn_name)(self)

    apply.__name__ = fn_name
    return apply


def _getitem(self, key):
    return slicing_ops.slice_helper(self, key)


# Dunder name (without underscores) -> (module, function); the functions are looked up when an operator runs.
_BINARY = {"add": (math_ops, "add"), "sub": (math_ops, "subtract"), "mul": (sparse_elementwise_ops, "multiply"),
           "truediv": (math_ops, "truediv"), "floordiv": (math_ops, "floordiv"), "mod": (math_ops, "floormod"),
           "pow": (math_ops, "pow"), "matmul": (matmul_ops, "matmul"), "and": (comparison_ops, "logical_and"),
           "or": (comparison_ops, "logical_or"), "xor": (comparison_ops, "logical_xor")}
_COMPARISONS = {"lt": (comparison_ops, "less"), "le": (comparison_ops, "less_equal"),
                "gt": (comparison_ops, "greater"), "ge": (comparison_ops, "greater_equal")}
_UNARY = {"neg": (unary_math_ops, "negative"), "abs": (unary_math_ops, "abs"),
          "invert": (comparison_ops, "logical_not")}


def operator_methods():
    """Dunder name → method, for every operator a tensor supports (besides ``==``/``!=``, which stay identity)."""
    methods = {}
    for dunder, (module, fn_name) in _BINARY.items():
        methods[f"__{dunder}__"], methods[f"__r{dunder}__"] = _binary(module, fn_name, scope=dunder)
    for dunder, (module, fn_name) in _COMPARISONS.items():
        methods[f"__{dunder}__"] = _binary(module, fn_name)[0]
    for dunder, (module, fn_name) in _UNARY.items():
        methods[f"__{dunder}__"] = _unary(module, fn_name)
    methods["__getitem__"] = _getitem
    return methods


def attach_operators(cls):
    """Gives ``cls`` the tensor operators; its instances must be convertible with ``tf.convert_to_tensor``."""
    for dunder, method in operator_methods().items():
        setattr(cls, dunder, method)


attach_operators(Tensor)
