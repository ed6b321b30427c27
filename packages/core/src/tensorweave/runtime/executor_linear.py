"""The straight-line executor: a partition without control flow, compiled to one Python function.

Each node becomes one line (``v3_0 = k3(v1_0, v2_0)``), values are dropped right after their last
consumer, and a failing line maps back to its node. Sends never block, and every partition follows
one global topological order, so partitions running side by side cannot deadlock.
"""

import itertools
import threading
import time

from tensorweave.runtime.kernels import instantiate, wrap_error
from tensorweave.runtime.memory_plan import MemoryPlan
from tensorweave.runtime.step import OpContext

_plan_ids = itertools.count()


def is_multi_output(op_def):
    """Kernels of these ops return a sequence; others return their one value."""
    return len(op_def.output_args) != 1 or op_def.output_args[0].is_list


class LinearExecutor:
    kind = "linear"

    def __init__(self, nodes, device, device_mgr, registries, config=None):
        self.nodes = list(nodes)
        self.device = device
        self.kernels = {}
        for node in self.nodes:
            if node.op_type not in ("_Arg", "_Retval"):
                self.kernels[id(node)] = instantiate(node, device, device_mgr, registries, config)
        self._planning = config is None or config.graph_options.memory_planning_enabled()
        self.memory = None  # the MemoryPlan, when planning is on
        self._fn, self._line_to_node, self.source, self._frees = self._compile()
        self._read = {key for keys in self._frees.values() for key in keys}

    def _compile(self):
        index = {id(n): i for i, n in enumerate(self.nodes)}
        last_use = {}
        for pos, node in enumerate(self.nodes):
            for src, slot in node.inputs:
                last_use[(index[id(src)], slot)] = pos
        used = set(last_use)
        env = {"OpContext": OpContext, "dev": self.device, "_wait_async": _wait_async}
        memory = self.memory = MemoryPlan(self.nodes, self.kernels, last_use) if self._planning else None
        if memory is not None:
            env.update(memory.env())
        host = self.device.is_host
        if not host:
            env["to_host"], env["from_host"] = self.device.to_host, self.device.from_host
        lines = ["def _run(feeds, results, step):"]
        line_to_node = {}
        frees = {}
        for key, pos in last_use.items():
            frees.setdefault(pos, []).append(f"v{key[0]}_{key[1]}")
        kept_at = {}
        for key, pos in last_use.items():
            if memory is not None and key in memory.kept:
                kept_at.setdefault(pos, []).append(key)
        for pos, node in enumerate(self.nodes):
            i = pos
            after = None
            args = [f"v{index[id(src)]}_{slot}" for src, slot in node.inputs]
            if node.op_type == "_Arg":
                src = f"feeds[{node.attrs['index']}]"
                code = f"v{i}_0 = {src if host else f'from_host({src})'}"
            elif node.op_type == "_Retval":
                code = f"results[{node.attrs['index']}] = {args[0] if host else f'to_host({args[0]})'}"
            else:
                kernel_def, compute = self.kernels[id(node)]
                env[f"k{i}"], env[f"n{i}"] = compute, node
                outs = [f"v{i}_{s}" if (i, s) in used else "_" for s in range(node.num_outputs)]
                if kernel_def.asynchronous:
                    call = f"_wait_async(k{i}, OpContext(step, n{i}, dev), {', '.join(args)})"
                elif kernel_def.context:
                    call = f"k{i}(OpContext(step, n{i}, dev){''.join(', ' + a for a in args)})"
                elif memory is not None and i in memory.slot_of and outs[0] != "_":
                    # offered in a line of its own: inside the call, the inputs on the stack would count as holders
                    lines.append(f"    o{i} = _offer({', '.join([memory.slot_of[i]] + memory.in_place[i])})")
                    line_to_node[len(lines)] = node
                    call = f"k{i}({''.join(a + ', ' for a in args)}out=o{i})"
                    after = f"del o{i}"
                else:
                    call = f"k{i}({', '.join(args)})"
                if not outs:
                    code = call
                elif is_multi_output(node.op_def):
                    code = f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}"
                elif outs[0] == "_":
                    code = call
                else:
                    code = f"{outs[0]} = {call}"
            lines.append("    " + code)
            line_to_node[len(lines)] = node
            if after:
                lines.append("    " + after)
            if pos in frees:
                lines.extend(f"    _keep({memory.kept[key]}, v{key[0]}_{key[1]})" for key in kept_at.get(pos, ()))
                lines.append("    del " + ", ".join(frees[pos]))
        if len(lines) == 1:
            lines.append("    pass")
        source = "\n".join(lines) + "\n"
        filename = f"<tensorweave-plan-{next(_plan_ids)}>"
        exec(compile(source, filename, "exec"), env)  # noqa: S102 - generated from our own plan
        traced_frees = {}  # position -> the (id(node), slot) values dropped after it
        for (src_pos, slot), pos in last_use.items():
            traced_frees.setdefault(pos, []).append((id(self.nodes[src_pos]), slot))
        return env["_run"], line_to_node, source, traced_frees

    def run(self, step, feeds, results):
        if step.stats is not None:
            return self.run_traced(step, feeds, results)
        try:
            self._fn(feeds, results, step)
        except Exception as exc:
            raise self._locate(exc) from None

    def _locate(self, exc):
        tb = exc.__traceback__
        node = None
        while tb is not None:
            if tb.tb_frame.f_code is self._fn.__code__:
                node = self._line_to_node.get(tb.tb_lineno)
            tb = tb.tb_next
        if node is None:
            return exc
        return wrap_error(node, exc)

    def run_traced(self, step, feeds, results):
        """The same plan, interpreted one node at a time with per-op timing for RunMetadata."""
        values = {}
        stats = step.stats
        thread = threading.get_ident()
        frees = self._frees
        for pos, node in enumerate(self.nodes):
            args = [values[(id(src), slot)] for src, slot in node.inputs]
            start = time.perf_counter()
            try:
                if node.op_type == "_Arg":
                    outputs = [self.device.from_host(feeds[node.attrs["index"]])]
                elif node.op_type == "_Retval":
                    results[node.attrs["index"]] = self.device.to_host(args[0])
                    outputs = []
                else:
                    kernel_def, compute = self.kernels[id(node)]
                    outputs = _call(kernel_def, compute, step, node, self.device, args)
            except Exception as exc:
                raise wrap_error(node, exc) from None
            end = time.perf_counter()
            stats.record(node, self.device.name, start, end, thread, outputs)
            for s, v in enumerate(outputs):
                if (id(node), s) in self._read:
                    values[(id(node), s)] = v
            del outputs, args
            for key in frees.get(pos, ()):
                values.pop(key, None)


def _call(kernel_def, compute, step, node, device, args):
    """Runs one kernel and returns its outputs as a list."""
    if kernel_def.asynchronous:
        out = _wait_async(compute, OpContext(step, node, device), *args)
    elif kernel_def.context:
        out = compute(OpContext(step, node, device), *args)
    else:
        out = compute(*args)
    if node.num_outputs == 0:
        return []
    return list(out) if is_multi_output(node.op_def) else [out]


def _wait_async(compute, ctx, *args):
    done_event = threading.Event()
    box = []

    def done(result):
        box.append(result)
        done_event.set()

    compute(ctx, done, *args)
    ctx.wait(done_event)
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    return result

