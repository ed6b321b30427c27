"""Operation: a vertex of the dataflow graph: an op type, attrs, input tensors and output tensors."""

import sys

from tensorweave.framework.default_session import get_default_session_or_raise
from tensorweave.framework.device_spec import canonical_name
from tensorweave.framework.graph_io import node_def_of
from tensorweave.framework.tensor import Tensor


def user_frame():
    """The (file, line, function) of the nearest caller outside tensorweave packages."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tensorweave"):
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0, "<unknown>")
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


class Operation:
    """One node. Created by ``Graph.create_op`` (through op wrappers), never directly by users."""

    def __init__(self, graph, op_def, name, inputs, attrs, output_dtypes, control_inputs=(), device="",
                 traceback=None):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = list(inputs)
        self._attrs = dict(attrs)
        self._control_inputs = []
        self._control_outputs = []
        self._device = device
        self._traceback = traceback or ("<unknown>", 0, "<unknown>")
        self._outputs = [Tensor(self, i, dt) for i, dt in enumerate(output_dtypes)]
        self._id = graph._next_id()
        self._control_flow_context = None
        for t in self._inputs:
            t._consumers.append(self)
        for op in control_inputs:
            self._add_control_input(op)

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._op_def.name

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self):
        return tuple(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def device(self):
        return self._device

    @property
    def traceback(self):
        """(file, line, function) of the user code that created this op."""
        return self._traceback

    @property
    def attrs(self):
        return dict(self._attrs)

    def get_attr(self, name):
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"operation {self._name!r} ({self.type}) has no attr named {name!r}; "
                             f"it has {sorted(self._attrs)}") from None

    def values(self):
        return tuple(self._outputs)

    @property
    def node_def(self):
        return node_def_of(self)

    def colocation_groups(self):
        groups = [g for g in self._attrs.get("_class", []) if g.startswith("loc:@")]
        return groups or [f"loc:@{self._name}"]

    def run(self, feed_dict=None, session=None):
        get_default_session_or_raise(session, self).run(self, feed_dict)

    def where(self):
        file, line, fn = self._traceback
        return f"{file}:{line} in {fn}"

    # Mutators used while building (control flow, colocation, device setters).
    def _set_device(self, device):
        self._device = canonical_name(device)

    def _set_attr(self, name, value):
        self._attrs[name] = value

    def _update_input(self, index, tensor):
        old = self._inputs[index]
        old._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)
        self._graph._version += 1

    def _add_input(self, tensor):
        self._inputs.append(tensor)
        tensor._consumers.append(self)
        self._graph._version += 1

    def _add_control_input(self, op):
        if not isinstance(op, Operation):
            raise TypeError(f"control input must be an Operation, got {op!r}")
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._graph._version += 1

    def _add_control_inputs(self, ops):
        for op in ops:
            self._add_control_input(op)

    def _remove_all_control_inputs(self):
        for op in self._control_inputs:
            op._control_outputs.remove(self)
        self._control_inputs = []
        self._graph._version += 1

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self.type}>"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other
