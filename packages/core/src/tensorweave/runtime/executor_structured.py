"""The structured executor: a partition whose control flow is plain tf.cond / tf.while_loop nesting, compiled
to one Python function with ``if`` for conds and ``while`` for loops (``control_structure`` finds them).

Only the taken branch of a cond runs, and a loop's iteration is straight-line code: Switch, Merge, Enter, Exit,
NextIteration and LoopCond are names for values, not nodes to schedule. Iterations run one after another,
which is one of the schedules the dataflow executor may pick for any ``parallel_iterations``; values do not
depend on the schedule (stateful ops inside a loop are ordered by their edges, as TF requires), so results
are the dataflow executor's bit for bit. Kernels get the frame and iteration the dataflow executor would
give them (per-iteration stacks and TensorArrays). Partitions with asynchronous kernels (queues, Send/Recv,
collectives) and traced steps keep the dataflow executor; ``ConfigProto(executor="dataflow")`` forces it.
With memory planning on, a kernel that accepts ``out=`` is offered the inputs that die at it (``memory_plan``).
"""

import collections
import itertools
import re

import numpy as np

from tensorweave import errors
from tensorweave.runtime.control_structure import Loop, NotStructured, analyze, pred_key
from tensorweave.runtime.executor_dataflow import DataflowExecutor
from tensorweave.runtime.executor_linear import is_multi_output
from tensorweave.runtime.kernels import instantiate, wrap_error
from tensorweave.runtime.memory_plan import InPlaceOffers, may_write_over, takes_out
from tensorweave.runtime.step import OpContext

_plan_ids = itertools.count()
_VARIABLE = re.compile(r"\bv\d+_\d+\b")
_ALIASES = ("enter", "exit", "next_iteration", "loop_cond", "switch")


class _LoopCode:
    """Where a loop's code is, for memory planning: the guard of the nodes that run only when an iteration goes
    on, the Merge variables its carry line binds, that line and the variables it hands on, and its last line."""

    def __init__(self, loop_cond):
        self.continue_guard = ((id(loop_cond), 0), True)
        self.merge_variables = set()
        self.carry_line = None
        self.carried = []
        self.end = None


class StructuredExecutor:
    kind = "structured"

    def __init__(self, nodes, device, device_mgr, registries, config=None):
        self.nodes = list(nodes)
        self.device = device
        self._fallback_args = (device_mgr, registries, config)
        self._traced = None  # the dataflow executor, built for the first traced step
        self.memory = InPlaceOffers() if config is None or config.graph_options.memory_planning_enabled() else None
        self.kernels = {}
        for node in self.nodes:
            if node.op_type not in ("_Arg", "_Retval") and node.role is None:
                kernel_def, compute = instantiate(node, device, device_mgr, registries, config)
                if kernel_def.asynchronous:
                    raise NotStructured(f"{node.name} ({node.op_type}) has an asynchronous kernel")
                self.kernels[id(node)] = (kernel_def, compute)
        region, self._guards = analyze(self.nodes)
        self._fn, self._line_to_node, self.source = _Compiler(self).compile(region)

    def run(self, step, feeds, results):
        if step.stats is not None:
            if self._traced is None:
                self._traced = DataflowExecutor(self.nodes, self.device, *self._fallback_args)
            return self._traced.run(step, feeds, results)
        try:
            self._fn(feeds, results, step)
        except Exception as exc:
            raise self._locate(exc) from None

    def _locate(self, exc):
        tb, node = exc.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code is self._fn.__code__:
                node = self._line_to_node.get(tb.tb_lineno)
            tb = tb.tb_next
        return exc if node is None else wrap_error(node, exc)


def _truth(device, value):
    """The predicate as the dataflow executor reads it (on the host), or None when it is not a scalar."""
    value = device.to_host(value)
    return bool(value) if np.ndim(value) == 0 else None


def _bad_predicate(value):
    raise errors.InvalidArgumentError(None, None, (
        f"the predicate of a Switch (tf.cond) must be a scalar bool, but it has shape {list(np.shape(value))}; "
        f"reduce it with tf.reduce_any or tf.reduce_all"))


def _dead_fetch(node):
    name = node.source.name if node.source is not None else node.name
    raise errors.InvalidArgumentError(None, node.source, (
        f"the fetched tensor from {name!r} is dead: it lies on the untaken branch of a Switch (tf.cond) in this "
        f"step, so it has no value. Fetch the cond's output instead."))


class _Compiler:
    def __init__(self, ex):
        self.ex = ex
        self.lines = []  # the function's body
        self.hoisted = []  # (line, node) run once at the start: input-less pure nodes of loop bodies (Consts)
        self.line_to_node = {}
        self.env = {"OpContext": OpContext, "dev": ex.device, "_I0": np.int32(0),
                    "_I1": np.int32(1), "_truth": _truth, "_bad_predicate": _bad_predicate,
                    "_dead_fetch": _dead_fetch}
        self.names = {}  # (id(node), slot) -> the variable holding it
        self.index = {id(n): i for i, n in enumerate(ex.nodes)}
        self.preds = {}  # (id(node), slot) of a Switch's predicate -> its truth variable
        self.read = set()
        for node in ex.nodes:
            for src, slot in node.inputs:
                self.read.add((id(src), slot))
            if node.role == "switch":
                key = pred_key(*node.inputs[1])
                self.preds[key] = f"t{len(self.preds)}" if key not in self.preds else self.preds[key]
        self.loop_merges = set()
        self.loops = []  # _LoopCode of every loop, and of the ones the code being emitted sits in
        self.enclosing = []
        self.line_loops = []  # per line of self.lines: the _LoopCode of the innermost loop it sits in, or None
        self.open_guard = ()  # the guard of the node being emitted, within its loop body
        self.producers = {}  # variable -> (node, slot) of the kernel output it holds
        self.offer_candidates = {}  # line -> (node index, indent, output, call arguments, continuing)
        self.computed = set()  # truth variables assigned so far in the code
        self.dead_checked = []  # (flag, retval) of fetches that a cond may leave dead
        for node in ex.nodes:
            if node.op_type == "_Retval" and ex._guards[(id(node.inputs[0][0]), node.inputs[0][1])]:
                i = self.index[id(node)]
                self.hoisted.append((f"    f{i} = False", None))
                self.dead_checked.append((f"f{i}", node))

    def compile(self, region):
        self._region(region, 1, "''", "0")
        for flag, node in self.dead_checked:
            self._emit(1, f"if not {flag}: _dead_fetch({self._bind(node)})", node)
        if self.ex.memory is not None:
            self._offer_dying_inputs()
            self.env.update(self.ex.memory.env())
        head = ["def _run(feeds, results, step):", "    _cancel = step.cancellation"]
        line_to_node = {}
        for line, node in self.hoisted:
            head.append(line)
            if node is not None:
                line_to_node[len(head)] = node
        line_to_node.update({k + len(head): v for k, v in self.line_to_node.items()})
        self.line_to_node = line_to_node
        source = "\n".join(head + self.lines) + "\n"
        exec(compile(source, f"<tensorweave-structured-{next(_plan_ids)}>", "exec"), self.env)  # noqa: S102
        return self.env["_run"], self.line_to_node, source

    # ---- layout ------------------------------------------------------------------------------------
    def _emit(self, depth, text, node=None):
        self.lines.append("    " * depth + text)
        self.line_loops.append(self.enclosing[-1] if self.enclosing else None)
        if node is not None:
            self.line_to_node[len(self.lines)] = node

    def _region(self, region, depth, frame_id, iteration):
        open_guard = ()
        for guard, item in region.items:
            common = 0
            while common < min(len(open_guard), len(guard)) and open_guard[common] == guard[common]:
                common += 1
            open_guard = guard[:common]
            for pred, side in guard[common:]:
                self._emit(depth + len(open_guard), f"if {'' if side else 'not '}{self._truth(pred)}:")
                open_guard += ((pred, side),)
            at = depth + len(open_guard)
            start = len(self.lines)
            self.open_guard = open_guard
            if isinstance(item, Loop):
                self._loop(item, at, frame_id, iteration)
            else:
                self._node(item, at, frame_id, iteration)
            if len(self.lines) == start and guard:
                self._emit(at, "pass")

    def _loop(self, loop, depth, frame_id, iteration):
        i = self.index[id(loop.enters[0])]
        fid, it = f"fid{i}", f"it{i}"
        for enter in loop.enters:
            self.names[(id(enter), 0)] = self._name(enter.inputs[0])
            self._truth_of(enter, 0, depth)
        self._emit(depth, f"{fid} = {frame_id} + '/{_quoted(loop.name)};' + str({iteration})")
        self._emit(depth, f"{it} = 0")
        for merge, enter, _ in loop.merges:
            m = self.index[id(merge)]
            self.loop_merges.add(id(merge))
            self.names[(id(merge), 0)] = f"v{m}_0"
            self._emit(depth, f"v{m}_0 = {self._name((enter, 0))}")
            if (id(merge), 1) in self.read:
                self.names[(id(merge), 1)] = f"v{m}_1"
                self._emit(depth, f"v{m}_1 = _I0")
        self._emit(depth, "while True:")
        code = _LoopCode(loop.loop_cond)
        code.merge_variables = {f"v{self.index[id(m)]}_0" for m, _, _ in loop.merges}
        self.loops.append(code)
        self.enclosing.append(code)
        for merge, _, _ in loop.merges:
            self._truth_of(merge, 0, depth + 1)
        self._region(loop.body, depth + 1, fid, it)
        for exit_ in loop.exits:
            self.names[(id(exit_), 0)] = self._name(exit_.inputs[0])
        cond = self._truth((id(loop.loop_cond), 0))
        self._emit(depth + 1, f"if not {cond}: break", loop.loop_cond)
        following = [(f"v{self.index[id(m)]}_0", self._name(n.inputs[0])) for m, _, n in loop.merges]
        if following:
            self._emit(depth + 1, f"{', '.join(a for a, _ in following)}, = {', '.join(b for _, b in following)},")
            code.carry_line, code.carried = len(self.lines) - 1, [b for _, b in following]
            for merge_variable, carried in following:  # from the second iteration on, a Merge variable holds the
                if carried in self.producers:  # carried value (in the first, the outer variable holds it too)
                    self.producers.setdefault(merge_variable, self.producers[carried])
        for merge, _, _ in loop.merges:
            if (id(merge), 1) in self.read:
                self._emit(depth + 1, f"v{self.index[id(merge)]}_1 = _I1")
        self._emit(depth + 1, f"{it} += 1")
        self._emit(depth + 1, "if _cancel.is_cancelled: raise _cancel.error", loop.loop_cond)
        code.end = len(self.lines) - 1
        self.enclosing.pop()
        for exit_ in loop.exits:
            self._truth_of(exit_, 0, depth)

    def _name(self, value):
        src, slot = value
        return self.names[(id(src), slot)]

    def _bind(self, node):
        i = self.index[id(node)]
        self.env[f"n{i}"] = node
        return f"n{i}"

    # ---- one node --------------------------------------------------------------------------------------
    def _node(self, node, depth, frame_id, iteration):
        if id(node) in self.loop_merges:
            return
        i = self.index[id(node)]
        role = node.role
        args = [self._name(v) for v in node.inputs]
        if node.op_def.is_pass_through and role is None and not node.num_outputs:
            return  # a NoOp: its control edges order nothing that the code's own order does not
        if role in _ALIASES or _passes_through(node):
            for slot in range(node.num_outputs):
                self.names[(id(node), slot)] = args[0]
            if role == "switch":
                self._check_predicate(node, depth)
            for slot in range(node.num_outputs):
                self._truth_of(node, slot, depth)
            return
        if role == "merge":
            self._cond_merge(node, depth)
            for slot in range(node.num_outputs):
                self._truth_of(node, slot, depth)
            return
        for slot in range(node.num_outputs):
            self.names[(id(node), slot)] = f"v{i}_{slot}"
            self.producers[f"v{i}_{slot}"] = (node, slot)
        host = self.ex.device.is_host
        if node.op_type == "_Arg":
            src = f"feeds[{node.attrs['index']}]"
            self.env["from_host"] = self.ex.device.from_host
            self._emit(depth, f"v{i}_0 = {src if host else f'from_host({src})'}", node)
        elif node.op_type == "_Retval":
            self.env["to_host"] = self.ex.device.to_host
            self._emit(depth, f"results[{node.attrs['index']}] = {args[0] if host else f'to_host({args[0]})'}", node)
            if any(node is n for _, n in self.dead_checked):
                self._emit(depth, f"f{i} = True")
        else:
            self._kernel(node, i, args, depth, frame_id, iteration)
        for slot in range(node.num_outputs):
            self._truth_of(node, slot, depth)

    def _kernel(self, node, i, args, depth, frame_id, iteration):
        kernel_def, compute = self.ex.kernels[id(node)]
        self.env[f"k{i}"] = compute
        if frame_id != "''" and not node.inputs and not node.is_stateful and not kernel_def.context and \
                not node.op_def.is_placeholder and node.num_outputs == 1 and not is_multi_output(node.op_def):
            self.hoisted.append((f"    v{i}_0 = k{i}()", node))  # the same value in every iteration
            return
        outs = [f"v{i}_{s}" if (id(node), s) in self.read or (id(node), s) in self.preds else "_"
                for s in range(node.num_outputs)]
        if kernel_def.context:
            ctx = f"OpContext(step, {self._bind(node)}, dev, {frame_id}, {iteration})"
            call = f"k{i}({ctx}{''.join(', ' + a for a in args)})"
        else:
            call = f"k{i}({', '.join(args)})"
        if not outs or all(o == "_" for o in outs):
            code = call
        elif is_multi_output(node.op_def):
            code = f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}"
        else:
            code = f"{outs[0]} = {call}"
            if self.ex.memory is not None and not kernel_def.context and takes_out(node, kernel_def, compute):
                continuing = bool(self.enclosing) and self.enclosing[-1].continue_guard in self.open_guard
                self.offer_candidates[len(self.lines)] = (i, depth, outs[0], args, continuing)
        self._emit(depth, code, node)

    def _offer_dying_inputs(self):
        """Rewrites the calls of kernels that accept ``out=`` to offer them their dying inputs (``_dies_at``), and
        drops the variables a loop's carry line hands on, so that the Merge variable is the carried value's only
        holder. The offer has a statement of its own, as in the straight-line executor, so that the reference
        count sees only the variable; line numbers stay as they are."""
        reads, binds = collections.defaultdict(list), collections.defaultdict(list)
        for n, line in enumerate(self.lines):
            text = line.strip()
            bound, sep, read = text.partition(" = ")
            if not sep or text.startswith("if "):
                bound, read = "", text
            for name in _VARIABLE.findall(bound):
                binds[name].append(n)
            for name in _VARIABLE.findall(read):
                reads[name].append(n)
        for loop in self.loops:
            handed_on = [name for name in dict.fromkeys(loop.carried) if name not in loop.merge_variables and
                         binds[name] and all(self.line_loops[b] is loop for b in binds[name]) and
                         reads[name][-1] == loop.carry_line]
            if handed_on:
                self.lines[loop.carry_line] += f"; del {', '.join(handed_on)}"
        for n, (i, depth, out, args, continuing) in self.offer_candidates.items():
            dying = [name for name in args if name in self.producers
                     and self._dies_at(n, name, reads[name], binds[name], continuing)
                     and may_write_over(*self.producers[name], self.ex.nodes[i])]
            if dying:
                slot = self.ex.memory.slot_name(i)
                self.lines[n] = ("    " * depth + f"o{i} = _offer({slot}, {', '.join(dict.fromkeys(dying))}); "
                                 f"{out} = k{i}({''.join(a + ', ' for a in args)}out=o{i}); del o{i}")

    def _dies_at(self, n, name, reads, binds, continuing):
        """No line after line ``n`` reads the value of ``name`` there. A variable bound in the same loop body only:
        no later line reads it (the next iteration binds it again before reading). A Merge variable of the loop,
        read where the iteration goes on: no later line of the loop reads it (the carry line binds it again; the
        lines after the loop read the value carried last). Anything else is read again."""
        later = [r for r in reads if r > n]
        loop = self.line_loops[n]
        if continuing and name in loop.merge_variables:
            return all(r > loop.end for r in later)
        return not later and bool(binds) and all(self.line_loops[b] is loop for b in binds)

    def _cond_merge(self, node, depth):
        i = self.index[id(node)]
        guards = [self.ex._guards[(id(src), slot)] for src, slot in node.inputs]
        pred, _ = guards[0][-1]
        taken = 0 if guards[0][-1][1] else 1  # the input on the predicate's true side
        t, f = self._name(node.inputs[taken]), self._name(node.inputs[1 - taken])
        truth = self._truth(pred)
        self.names[(id(node), 0)] = f"v{i}_0"
        self._emit(depth, f"v{i}_0 = {t} if {truth} else {f}", node)
        if (id(node), 1) in self.read:
            self.names[(id(node), 1)] = f"v{i}_1"
            self._emit(depth, f"v{i}_1 = _I{taken} if {truth} else _I{1 - taken}", node)

    def _truth(self, pred):
        """The variable holding a predicate's truth; the analysis and this code must agree that it is set."""
        truth = self.preds.get(pred)
        if truth not in self.computed:
            raise NotStructured(f"a predicate is read before the code computes it ({pred})")
        return truth

    def _truth_of(self, node, slot, depth):
        """After the node that computes a predicate: its truth, read once for every Switch on it."""
        truth = self.preds.get((id(node), slot))
        if truth is None:
            return
        self.computed.add(truth)
        value = self.names[(id(node), slot)]
        shape = node.output_shapes[slot]
        scalar = shape is not None and shape.as_tuple() == ()
        if scalar and self.ex.device.is_host:
            self._emit(depth, f"{truth} = {value}", node)
        else:
            self._emit(depth, f"{truth} = _truth(dev, {value})", node)

    def _check_predicate(self, node, depth):
        src, slot = node.inputs[1]
        key = pred_key(src, slot)
        shape = src.output_shapes[slot]
        if shape is None or shape.as_tuple() != () or not self.ex.device.is_host:
            self._emit(depth, f"if {self._truth(key)} is None: _bad_predicate({self._name((src, slot))})", node)


def _passes_through(node):
    """Identity and its kin hand their one input on uncopied (``OpDef.is_pass_through``): a name, not a call."""
    return node.role is None and node.op_def.is_pass_through and len(node.inputs) == 1 and node.num_outputs == 1


def _quoted(name):
    return name.replace("\\", "\\\\").replace("'", "\\'")
