"""Python operators on tensors (+ - * / // % ** @, unary - and abs, comparisons, & | ^ ~, indexing).

They are attached to ``Tensor`` when this module is imported (``import tensorweave`` does), with TF1's
meanings: ``/`` is truediv (integers become floats), ``//`` floordiv, ``%`` floormod, ``&``/``|``/``^``/``~``
are logical ops on bool tensors, and ``==`` stays identity so tensors can key feed dicts. Reflected forms
make ``1.0 - t`` and ``ndarray + t`` work. ``attach_operators`` gives the same operators to any class whose
instances convert to tensors (variables, for example).
"""

from tensorweave.framework.tensor import Tensor

__all__ = []


def _math():
    from tensorweave.ops import math_ops
    return math_ops


def _binary(fn_name):
    def forward(self, other):
        return getattr(_math(), fn_name)(self, other)

    def reflected(self, other):
        return getattr(_math(), fn_name)(other, self)

    forward.__name__, reflected.__name__ = fn_name, f"r{fn_name}"
    return forward, reflected


def _unary(fn_name):
    def apply(self):
        return getattr(_math(), fn_name)(self)

    apply.__name__ = fn_name
    return apply


def _getitem(self, key):
    from tensorweave.ops import array_ops
    return array_ops.slice_helper(self, key)


_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "truediv", "floordiv": "floordiv",
           "mod": "floormod", "pow": "pow", "matmul": "matmul", "and": "logical_and", "or": "logical_or",
           "xor": "logical_xor"}
_COMPARISONS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
_UNARY = {"neg": "negative", "abs": "abs", "invert": "logical_not"}


def operator_methods():
    """Dunder name → method, for every operator a tensor supports (besides ``==``/``!=``, which stay identity)."""
    methods = {}
    for dunder, fn_name in _BINARY.items():
        methods[f"__{dunder}__"], methods[f"__r{dunder}__"] = _binary(fn_name)
    for dunder, fn_name in _COMPARISONS.items():
        methods[f"__{dunder}__"] = _binary(fn_name)[0]
    for dunder, fn_name in _UNARY.items():
        methods[f"__{dunder}__"] = _unary(fn_name)
    methods["__getitem__"] = _getitem
    return methods


def attach_operators(cls):
    """Gives ``cls`` the tensor operators; its instances must be convertible with ``tf.convert_to_tensor``."""
    for dunder, method in operator_methods().items():
        setattr(cls, dunder, method)


attach_operators(Tensor)
