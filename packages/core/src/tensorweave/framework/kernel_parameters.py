"""Checks, when a kernel registers, that its compute function's parameters fit how its op's kernels are called.

The executor passes an op's inputs positionally (after ``ctx`` for context kernels, ``ctx, done`` for
asynchronous ones); attrs reach only keyword-only parameters (``def softclip(x, *, c)``), as do ``node``,
``device`` and ``xp``, and ``out`` for kernels that accept an output buffer. A parameter outside these
rules would silently keep its default (or take an input meant for another), so registration refuses it.
"""

import inspect

BOUND_PARAMETERS = ("node", "device", "xp")  # keyword-only parameters bound per node, not from attrs
CALL_KEYWORDS = ("out",)  # passed by the executor's memory planning to a kernel declaring ``accepts_out``

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def check_compute_parameters(kernel_def, op_def, plugin):
    """Raises TypeError naming the plugin, op, function and parameter when ``kernel_def.compute`` cannot fit."""
    fn = kernel_def.compute
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: nothing to read
        return
    leading = 2 if kernel_def.asynchronous else 1 if kernel_def.context else 0
    positional = [p for p in params if p.kind in _POSITIONAL][leading:]
    variadic = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    inputs = [arg.name for arg in op_def.input_args]
    has_inputs = f"has {len(inputs)} input{'' if len(inputs) == 1 else 's'} {inputs}"

    def refuse(problem, fix):
        raise TypeError(f"plugin {plugin!r}: the kernel for op {op_def.name!r} on {kernel_def.device_type}, "
                        f"{_describe(fn)}, {problem}. To fix: {fix}.")

    for p in positional:
        if p.name in op_def.attrs and p.name not in inputs:
            default = " with a default" if p.default is not p.empty else ""
            refuse(f"takes attr {p.name!r} as a positional parameter{default}, which never receives the attr's "
                   f"value (the executor passes only the inputs {inputs} positionally)",
                   f"attrs are keyword-only parameters: {_suggest(fn, params, positional, op_def)}")
    if not any(arg.is_list for arg in op_def.input_args):
        taking = [p for p in positional if not (p.name in CALL_KEYWORDS and p.default is not p.empty)]
        required = [p for p in taking if p.default is p.empty]
        if len(taking) > len(inputs):
            extra = [p.name for p in taking[len(inputs):]]
            refuse(f"takes {len(taking)} positional parameters {[p.name for p in taking]} but the op "
                   f"{has_inputs}, so {extra} never receive{'s' if len(extra) == 1 else ''} an input",
                   "take one positional parameter per input; an attr is a keyword-only parameter "
                   "(after `*`), named as the attr")
        if len(required) < len(inputs) and not variadic:
            refuse(f"takes {len(required)} positional parameters {[p.name for p in required]} but the op "
                   f"{has_inputs}", "take one positional parameter per input")
    for p in params:  # one with a default may serve several ops, of which only some have the attr (MaxPool's
        # explicit_paddings, which AvgPool lacks); one without would fail every run
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is p.empty and p.name not in op_def.attrs and \
                p.name not in BOUND_PARAMETERS + CALL_KEYWORDS:
            refuse(f"takes the keyword-only parameter {p.name!r} without a default, which is no attr of the op "
                   f"(its attrs: {sorted(op_def.attrs)}), so every run would fail",
                   f"name it as the attr it stands for; {', '.join(BOUND_PARAMETERS)} and {', '.join(CALL_KEYWORDS)} "
                   f"are the only other keyword-only parameters a kernel gets")


def _describe(fn):
    """``module.qualname (file:line)`` of a compute function, as far as it has them."""
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    name = f"{getattr(fn, '__module__', None) or '?'}.{qualname}"
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return f"{name} ({code.co_filename}:{code.co_firstlineno})" if code is not None else name


def _suggest(fn, params, positional, op_def):
    """The signature the function should have: its inputs positional, its attrs after ``*``."""
    attrs = [p for p in positional if p.name in op_def.attrs]
    head = [p.name for p in params if p.kind in _POSITIONAL and p not in attrs]
    variadic = [f"*{p.name}" for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL]
    tail = [p.name for p in attrs] + [str(p) for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    return f"def {getattr(fn, '__name__', 'compute')}({', '.join(head + (variadic or ['*']) + tail)})"
