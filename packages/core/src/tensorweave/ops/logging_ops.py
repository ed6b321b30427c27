"""Assert, Print and tf.print: checks and printing that happen when the graph runs.

Printing goes through Python's ``sys.stderr`` / ``sys.stdout`` (looked up when the op runs), so it
shows in notebooks and test captures, unlike a C++ runtime's file descriptors.
"""

import logging
import sys

from tensorweave import dtypes
from tensorweave.framework import nest
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = ["Assert", "Print", "print"]

DEFS.define("Assert", inputs=["condition: bool", "data: T"], attrs=["T: list(any)", "summarize: int = 3"],
            is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Fails the step with InvalidArgumentError (printing data) when condition is false.")
PRINT = DEFS.define("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
                    attrs=["T: any", "U: list(any)", "message: string = ''", "first_n: int = -1",
                           "summarize: int = 3"], is_stateful=True, shape_fn=lambda op: op.inputs[0].shape,
                    doc="Returns input; prints message and data to stderr when it runs (the first first_n times).")
DEFS.define("PrintV2", inputs=["inputs: T"], attrs=["T: list(any)", "template: string", "output_stream: string",
                                                   "summarize: int = 3", "end: string = '\\n'"],
            is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Prints template with each {} replaced by the next input, to output_stream.")


@PRINT.set_gradient
def _print_grad(op, grad, *unused):
    return [grad] + [None] * (len(op.inputs) - 1)


def _data_tensors(data):
    return [convert_to_tensor(d) for d in data]


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """An op that fails the step with InvalidArgumentError, listing ``data``, when ``condition`` is false."""
    condition = convert_to_tensor(condition, dtype=dtypes.bool)
    if condition.shape.ndims not in (None, 0):
        raise ValueError(f"tf.Assert: condition must be a scalar bool, but {condition.name} has shape "
                         f"{condition.shape}; reduce it with tf.reduce_all")
    return apply_op("Assert", [condition, _data_tensors(data)], {"summarize": 3 if summarize is None else summarize},
                    name=name or "Assert")


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802 - TF's name
    """``input_``, printing ``message`` and the values of ``data`` to stderr each time it is computed."""
    return apply_op("Print", [input_, _data_tensors(data)], {
        "message": message or "", "first_n": -1 if first_n is None else first_n,
        "summarize": 3 if summarize is None else summarize}, name=name or "Print")


_LOG_LEVELS = {logging.debug: "log(debug)", logging.info: "log(info)", logging.warning: "log(warning)",
               logging.error: "log(error)"}


def _stream_name(stream):
    if stream is sys.stdout or stream is sys.__stdout__ or stream == "stdout":
        return "stdout"
    if stream is None or stream is sys.stderr or stream is sys.__stderr__ or stream == "stderr":
        return "stderr"
    if stream in _LOG_LEVELS:
        return _LOG_LEVELS[stream]
    if isinstance(stream, str) and (stream.startswith("file://") or stream in _LOG_LEVELS.values()):
        return stream
    raise ValueError(f"tf.print: output_stream must be sys.stdout, sys.stderr, a logging function "
                     f"(logging.info, ...) or a 'file://path' string, got {stream!r}")


class _Slot:
    def __repr__(self):
        return "{}"


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001 - TF's name
    """TF2's ``tf.print``: an op printing Python values and tensors (nested in lists/dicts too).

    ``output_stream`` is sys.stderr (the default), sys.stdout, a logging function or 'file://path'.
    """
    tensors, parts = [], []
    for value in inputs:
        leaves = nest.flatten(value) if nest.is_nested(value) else [value]
        if not any(isinstance(v, Tensor) or hasattr(v, "_as_graph_element") for v in leaves):
            parts.append(str(value).replace("{", "{{").replace("}", "}}"))
            continue
        tensors.extend(convert_to_tensor(v) for v in leaves if isinstance(v, Tensor) or hasattr(v, "_as_graph_element"))
        shown = nest.map_structure(
            lambda v: _Slot() if isinstance(v, Tensor) or hasattr(v, "_as_graph_element") else v, value)
        text = repr(shown) if nest.is_nested(value) else "{}"
        parts.append(text.replace("{", "{{").replace("}", "}}").replace("{{}}", "{}"))
    return apply_op("PrintV2", [tensors], {"template": sep.join(parts), "output_stream": _stream_name(output_stream),
                                           "summarize": summarize, "end": end}, name=name or "PrintV2")
