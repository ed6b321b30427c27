"""The CPU kernel of ``_FusedElementwise``: the fused ops compiled into one Python function per node.

An op whose chosen kernel is this package's numpy kernel with a known formula (FORMULAS: the same ufunc calls
in the same order, so every result is identical) runs as those calls; any other op (Cast, Select, a native
kernel, another plugin's kernel) runs its own kernel. With inputs of LARGE elements or more, each call writes
into a temporary of the expression that nothing reads any more (``out=``) when dtype and shape match, instead
of allocating an array per op; a kernel of its own gets that offer too when it accepts ``out=``. A temporary
counts as the function's own when a ufunc made it, or a kernel returned the very buffer it was given, and no
other kernel has read it since; anything else is written over only when its reference count shows that the
function alone holds it. Smaller inputs run the same calls without ``out=`` (numpy's allocation is cheaper).
The function itself accepts ``out``: a buffer the executor owns outright (a dying input or an earlier output,
see ``runtime/memory_plan``). Floating-point warnings are silenced around exactly the ops whose own kernels
silence them, and a failure names the original op and the user's line, not the fused node.
"""

import itertools
import re
import sys

import numpy as np

from tensorweave.extension import KernelSet, errors

from tensorweave_cpu.kernels import math as math_kernels, nn as nn_kernels

KERNELS = KernelSet("CPU")

_ids = itertools.count()
LARGE = 4096  # elements from which writing into a dying buffer beats numpy's allocation (measured here)


class _Temp(int):
    """A formula's reference to the result of one of its own earlier calls (by position)."""


class _Const:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


T0, T1, T2, T3 = (_Temp(i) for i in range(4))
ZERO, ONE, SIX = _Const(0), _Const(1), _Const(6)

_UFUNC_OPS = {
    "Add": "add", "Sub": "subtract", "Mul": "multiply", "Maximum": "maximum", "Minimum": "minimum", "Neg": "negative",
    "Abs": "absolute", "Sign": "sign", "Square": "square", "Tanh": "tanh", "Floor": "floor", "Ceil": "ceil",
    "Round": "rint", "Conj": "conjugate", "IsFinite": "isfinite", "IsNan": "isnan", "IsInf": "isinf", "Less": "less",
    "LessEqual": "less_equal", "Greater": "greater", "GreaterEqual": "greater_equal", "Equal": "equal",
    "NotEqual": "not_equal", "LogicalAnd": "logical_and", "LogicalOr": "logical_or", "LogicalNot": "logical_not",
    "RealDiv": "true_divide", "Pow": "power", "Exp": "exp", "Expm1": "expm1", "Log": "log", "Log1p": "log1p",
    "Sqrt": "sqrt", "Reciprocal": "reciprocal", "Sin": "sin", "Cos": "cos"}
"""Ops whose numpy kernel is the ufunc itself (kernels/math.py)."""

FORMULAS = {op: ((name,) + tuple(range(getattr(np, name).nin)),) for op, name in _UFUNC_OPS.items()}
FORMULAS.update({
    "Rsqrt": (("sqrt", 0), ("reciprocal", T0)),
    "Sigmoid": (("negative", 0), ("logaddexp", ZERO, T0), ("negative", T1), ("exp", T2)),
    "SqrtGrad": (("multiply", 1, _Const(0.5)), ("true_divide", T0, 0)),
    "RsqrtGrad": (("multiply", 1, _Const(-0.5)), ("multiply", 0, 0), ("multiply", T1, 0), ("multiply", T0, T2)),
    "ReciprocalGrad": (("negative", 1), ("multiply", 0, 0), ("multiply", T0, T1)),
    "TanhGrad": (("multiply", 0, 0), ("subtract", ONE, T0), ("multiply", 1, T1)),
    "SigmoidGrad": (("subtract", ONE, 0), ("multiply", 0, T0), ("multiply", 1, T1)),
    "Relu": (("maximum", 0, ZERO),),
    "ReluGrad": (("greater", 1, ZERO), ("multiply", 0, T0)),
    "Relu6Grad": (("greater", 1, ZERO), ("less", 1, SIX), ("bitwise_and", T0, T1), ("multiply", 0, T2)),
    "Softplus": (("logaddexp", 0, ZERO),),
    "Softsign": (("absolute", 0), ("add", ONE, T0), ("true_divide", 0, T1)),
    "SoftplusGrad": (("negative", 1), ("logaddexp", ZERO, T0), ("negative", T1), ("exp", T2), ("multiply", 0, T3)),
    "SoftsignGrad": (("absolute", 1), ("add", ONE, T0), ("multiply", T1, T1), ("true_divide", 0, T2)),
})
"""Op -> the ufunc calls its numpy kernel makes: (ufunc name, operands), an operand being the op's input k,
a _Temp (an earlier call's result) or a _Const (a Python scalar, weakly typed as in the kernel)."""

QUIET = frozenset(("RealDiv", "Pow", "Exp", "Expm1", "Log", "Log1p", "Sqrt", "Reciprocal", "Sin", "Cos", "Rsqrt",
                   "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "TanhGrad", "SigmoidGrad"))
"""Ops whose numpy kernels run with floating-point warnings silenced."""

REAL_ONLY = frozenset(("Sigmoid", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "TanhGrad", "SigmoidGrad"))
"""Ops whose numpy kernels take another formula for complex values (those run their own kernel)."""

_NUMPY_KERNELS = {id(k) for k in itertools.chain(math_kernels.KERNELS, nn_kernels.KERNELS)}


class _Call:
    """One line of the compiled function: ``target = fn(operands)``; ``dtype`` is None for a kernel that takes
    no ``out=``; ``owned`` says the result is a fresh array of ours (a ufunc's)."""

    __slots__ = ("target", "fn", "operands", "dtype", "quiet", "step", "owned")

    def __init__(self, target, fn, operands, dtype, quiet, step, owned):
        self.target, self.fn, self.operands, self.dtype = target, fn, operands, dtype
        self.quiet, self.step, self.owned = quiet, step, owned


def _np_dtype(dtype):
    numpy_type = dtype.as_numpy_dtype
    return None if numpy_type is None else np.dtype(numpy_type)


def _operand_type(value, dtypes):
    return type(value.value) if isinstance(value, _Const) else dtypes[value]


class _Compiler:
    """Turns one fused node's attrs into the source and globals of its function."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.env = {"_nd": np.ndarray, "_into": _into, "_into_dtype": _into_dtype, "_free": _free, "_large": _large,
                    "_errstate": np.errstate}
        self.inputs = [f"i{k}" for k in range(len(ctx.input_dtypes))]
        self.dtype = {name: _np_dtype(t) for name, t in zip(self.inputs, ctx.input_dtypes)}
        self.calls = []
        self.steps = []  # KernelBuildContext per step, for errors

    def compile(self):
        attrs = self.ctx.attrs
        registers = list(self.inputs)
        dtypes = list(self.ctx.input_dtypes)
        root = self.ctx.name
        for s, (op_type, name, operands, pairs, out_dtype) in enumerate(zip(
                attrs["fused_ops"], attrs["fused_names"], attrs["fused_operands"], attrs["fused_attrs"],
                attrs["fused_dtypes"])):
            step = self.ctx.for_op(op_type, name, {k: v for k, v in pairs}, [dtypes[r] for r in operands], [out_dtype],
                                   self._source(name), f" (run inside the fused node {root!r}; the elementwise_fusion "
                                                       f"graph pass made it)")
            self.steps.append(step)
            kernel_def, compute = step.instantiate()
            if kernel_def.context:
                raise errors.InternalError(None, step.source, f"op {name!r} ({op_type}) needs a context kernel and "
                                                              f"cannot run inside a fused node")
            args = [registers[r] for r in operands]
            result = self._formula(s, op_type, kernel_def, args, out_dtype) or self._opaque(s, compute, args, out_dtype)
            registers.append(result)
            dtypes.append(out_dtype)
        return self._source_code(registers[-1])

    def _source(self, name):
        source = self.ctx.source
        try:
            return source.graph.get_operation_by_name(name) if source is not None else None
        except (KeyError, AttributeError):
            return source

    def _opaque(self, step, compute, args, out_dtype):
        """A call of the op's own kernel; one that accepts ``out=`` is offered buffers as a formula's call is."""
        fn = f"k{step}"
        self.env[fn] = compute
        target = f"v{len(self.calls)}"
        dtype = _np_dtype(out_dtype)
        self.calls.append(_Call(target, fn, args, dtype if getattr(compute, "accepts_out", False) else None, False,
                                step, False))
        self.dtype[target] = dtype
        return target

    def _formula(self, step, op_type, kernel_def, args, out_dtype):
        """Appends the op's ufunc calls and returns its result's name; None when it runs its own kernel."""
        formula = FORMULAS.get(op_type)
        if formula is None or id(kernel_def) not in _NUMPY_KERNELS or (op_type in REAL_ONLY and out_dtype.is_complex):
            return None
        if any(self.dtype[a] is None for a in args):
            return None
        calls, temps, dtypes = [], [], dict(self.dtype)
        for ufunc_name, *operands in formula:
            names = [temps[o] if isinstance(o, _Temp) else o if isinstance(o, _Const) else args[o] for o in operands]
            try:
                dtype = getattr(np, ufunc_name).resolve_dtypes(
                    tuple(_operand_type(n, dtypes) for n in names) + (None,))[-1]
            except (TypeError, ValueError):
                return None  # numpy has no loop for these dtypes: the op's own kernel reports it
            target = f"v{len(self.calls) + len(calls)}"
            calls.append(_Call(target, ufunc_name, names, dtype, op_type in QUIET, step, True))
            dtypes[target] = dtype
            temps.append(target)
        self.dtype = dtypes
        for call in calls:
            self.env[call.fn] = getattr(np, call.fn)
            for k, n in enumerate(call.operands):
                if isinstance(n, _Const):
                    const = f"c{len(self.env)}"
                    self.env[const] = n.value
                    call.operands[k] = const
        self.calls.extend(calls)
        return temps[-1]

    def _source_code(self, result):
        """The function: for large arrays each call writes where ``_out_expression`` says, for small ones
        (where numpy's own allocation is cheaper than passing ``out``) each allocates."""
        last_use, opaque_reads = {}, {}
        for m, call in enumerate(self.calls):
            for n in call.operands:
                last_use[n] = m
                if not call.owned:
                    opaque_reads.setdefault(n, []).append(m)
        lines = [f"def fused({''.join(i + ', ' for i in self.inputs)}out=None):", "    try:",
                 f"        if _large({', '.join(self.inputs)}):"]
        line_step = {}
        for reuse in (True, False):
            indent = "            " if reuse else "        "
            quiet, names, flagged = False, _Names(), set()
            for m, call in enumerate(self.calls):
                if call.quiet != quiet:
                    quiet = call.quiet
                    if quiet:
                        lines.append(indent + "with _errstate(all='ignore'):")
                pad = indent + ("    " if quiet else "")
                before, out, written = (self._out_expression(m, call, last_use, opaque_reads, flagged) if reuse
                                        else ((), None, None))
                for text in before:
                    lines.append(pad + names.rename(text))
                    line_step[len(lines)] = call.step
                text = names.rename(f"{call.fn}({', '.join(call.operands)}{f', out={out}' if out else ''})")
                names.release(n for n in dict.fromkeys(call.operands) if n.startswith("v") and last_use[n] == m)
                target = names.bind(call.target, written)
                lines.append(pad + f"{target} = {text}")
                line_step[len(lines)] = call.step
                if out == "o":
                    if not call.owned:  # another kernel that took out=: its result is ours when it is that buffer
                        lines.append(pad + f"f{m} = {target} is o")
                        flagged.add(m)
                    lines.append(pad + "o = None")  # its reference would count against a later _free
            lines.append(f"{indent}return {names.rename(result)}")
        lines += ["    except Exception as e:", "        raise _locate(e) from None"]
        return "\n".join(lines) + "\n", line_step

    def _out_expression(self, m, call, last_use, opaque_reads, flagged):
        """(lines before the call, its ``out=`` expression, the temporary it may write over): a dying temporary
        of its dtype, else the caller's ``out``, else nothing. A temporary counts as ours when a ufunc made it,
        or another kernel returned the buffer it was given, and no other kernel has read it since; any other is
        checked for holders (``_free``) in a line of its own, as inside the call its argument is one more."""
        if call.dtype is None:
            return (), None, None  # another kernel that takes no out=
        arrays = [n for n in call.operands if n in self.dtype]  # not the constants
        for t in arrays:
            if not (t.startswith("v") and last_use[t] == m and self.dtype[t] == call.dtype):
                continue
            producer = int(t[1:])
            if any(j < m for j in opaque_reads.get(t, ())):
                ours = f"_free({t})"
            elif self.calls[producer].owned:
                ours = ""
            else:
                ours = f"(f{producer} or _free({t}))" if producer in flagged else f"_free({t})"
            rest = [n for n in arrays if n != t]
            check = f"{t}.__class__ is _nd" + (f" and {ours}" if ours else "")
            same = "".join(f" and ({x}.shape == {t}.shape or not {x}.shape)" for x in rest)  # equal, or a scalar
            fallback = f" else _into({t}, {', '.join([t] + rest)}) if {check}" if rest else ""
            expression = f"({t} if {check}{same}{fallback} else None)"
            if not ours and call.owned:
                return (), expression, t
            return (f"o = {expression}",), "o", t
        read_later = [i for i in self.inputs if last_use.get(i, -1) > m]
        dtype_name = f"d{m}"
        self.env[dtype_name] = call.dtype
        guard = "".join(f" and out is not {i}" for i in read_later)
        return ((f"o = _into_dtype(out, {dtype_name}, {', '.join(arrays)}) if out is not None{guard} else None",
                 "if o is not None: out = None"), "o", None)


class _Names:
    """Local variable names for an expression's values: a value nothing reads any more gives its name to a
    later one, so its array is released (or, written over, kept) instead of living to the end of the call."""

    def __init__(self):
        self.of = {}
        self.free = []
        self.count = 0

    def rename(self, text):
        return re.sub(r"\bv\d+\b", lambda match: self.of[match.group(0)], text)

    def release(self, values):
        self.free.extend(self.of[v] for v in values)

    def bind(self, value, prefer=None):
        name = self.of.get(prefer) if prefer is not None else None
        if name in self.free:
            self.free.remove(name)
        elif self.free:
            name = self.free.pop()
        else:
            name, self.count = f"r{self.count}", self.count + 1
        self.of[value] = name
        return name


def _refs(v):
    return sys.getrefcount(v)


def _probe():
    value = np.empty(1)
    return _refs(value)


_SOLE = _probe()  # the count of a value that one variable of the compiled function holds


def _free(v):
    """Whether another kernel's result is held by nothing but the compiled function (not cached, not a view)."""
    return sys.getrefcount(v) == _SOLE and v.base is None and v.flags.writeable and v.flags.c_contiguous


def _into(buf, *operands):
    """``buf`` when broadcasting ``operands`` gives exactly its shape (so ``out=buf`` changes no value), else None."""
    if buf.__class__ is not np.ndarray:
        return None
    shape = buf.shape
    exact = False
    for x in operands:
        s = getattr(x, "shape", ())
        if s == shape:
            exact = True
        elif len(s) > len(shape) or any(a != b and a != 1 for a, b in zip(s[::-1], shape[::-1])):
            return None
    return buf if exact else None


def _large(*inputs):
    """Whether to write into buffers: some input has LARGE elements, and all are arrays or numpy scalars."""
    large = False
    for x in inputs:
        size = getattr(x, "size", None)
        if size is None:
            return False  # a Python scalar from some kernel: the plain calls take it as they are
        large = large or size >= LARGE
    return large


def _into_dtype(buf, dtype, *operands):
    return _into(buf, *operands) if buf.__class__ is np.ndarray and buf.dtype == dtype else None


_CODE_CACHE = {}
_CODE_CACHE_SIZE = 512


def _compiled(source):
    """The compiled module of ``source``: nodes with the same formula (a long chain cut into equal pieces, one
    layer's ops in each tower) share one compilation, which costs more than the rest of building a node."""
    code = _CODE_CACHE.get(source)
    if code is None:
        if len(_CODE_CACHE) >= _CODE_CACHE_SIZE:
            _CODE_CACHE.pop(next(iter(_CODE_CACHE)))
        code = _CODE_CACHE[source] = compile(source, "<tensorweave-fused>", "exec")
    return code


_FORMULA_CACHE = {}


def _formula_key(ctx):
    """What a fused node's function depends on when every op in it runs as ufunc calls: its device, its input
    dtypes and its ops (types, wiring, attrs, dtypes), not its node names."""
    attrs = ctx.attrs
    return repr((ctx.device.name, [str(t) for t in ctx.input_dtypes], attrs["fused_ops"], attrs["fused_operands"],
                 attrs["fused_attrs"], [str(t) for t in attrs["fused_dtypes"]]))


def _build(ctx):
    """(source, line_step, globals, the ops' build contexts or None): nodes of one structure made only of formulas
    (the pieces of a long chain, the same layer in each tower, every plan of one graph) share a build; their
    contexts, needed only to name a failing op, are built again when one fails."""
    key = _formula_key(ctx)
    cached = _FORMULA_CACHE.get(key)
    if cached is not None:
        return (*cached, None)
    compiler = _Compiler(ctx)
    source, line_step = compiler.compile()
    if all(call.owned for call in compiler.calls):  # no kernel of its own: nothing node-specific in the globals
        if len(_FORMULA_CACHE) >= _CODE_CACHE_SIZE:
            _FORMULA_CACHE.pop(next(iter(_FORMULA_CACHE)))
        _FORMULA_CACHE[key] = (source, line_step, dict(compiler.env))
    return source, line_step, compiler.env, compiler.steps


@KERNELS.register_build("_FusedElementwise")
def _fused_elementwise(ctx):
    source, line_step, env, steps = _build(ctx)
    env = dict(env)
    code = _compiled(source)

    def locate(exc):
        tb, step = exc.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code is fn.__code__:
                step = line_step.get(tb.tb_lineno)
            tb = tb.tb_next
        if step is None:
            return exc
        compiler_steps = steps
        if compiler_steps is None:
            compiler = _Compiler(ctx)
            compiler.compile()
            compiler_steps = compiler.steps
        return compiler_steps[step].error(exc)

    env["_locate"] = locate
    exec(code, env)  # noqa: S102 - generated from the node's own attrs
    fn = env["fused"]
    fn.__code__ = fn.__code__.replace(co_filename=f"<tensorweave-fused-{next(_ids)}:{ctx.name}>")  # for tracebacks
    fn.accepts_out = True
    fn.source = source
    return fn
