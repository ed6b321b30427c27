"""Recovering tf.cond and tf.while_loop from a partition's Switch/Merge/Enter/Exit/NextIteration nodes, so
the structured executor can run them as Python ``if`` and ``while`` instead of scheduling node by node.

Each value gets a *guard*: the chain of (predicate tensor, side) that must hold, in its frame's current
iteration, for the dataflow executor to find it live. A Switch's outputs add (pred, False) and (pred, True);
an op takes the longest of its inputs' guards (they must be prefixes of one another); a cond's Merge of
``prefix + (p, False)`` and ``prefix + (p, True)`` is live exactly when ``prefix`` holds. A loop frame
becomes a ``Loop`` placed in its parent at its Enters; in the frame, guards start afresh each iteration,
the LoopCond's Switches add (cond, True) to the body and (cond, False) to the Exits. Whatever does not fit
these rules exactly (a Merge of two live values, a NextIteration that may be dead, a non-constant Enter
read by an op) raises ``NotStructured`` and the partition keeps the dataflow executor.
"""

import heapq

from tensorweave.runtime.loop_frames import LoopFrames


class NotStructured(Exception):
    """The partition's control flow is not plain cond/while nesting; the reason says which node."""


class Loop:
    """One while-loop frame: its Merges (with their Enter and NextIteration), LoopCond and body Region."""

    def __init__(self, name, parallel_iterations):
        self.name = name
        self.parallel_iterations = parallel_iterations
        self.merges = []  # (merge, enter, next_iteration)
        self.enters = []
        self.exits = []
        self.loop_cond = None
        self.body = Region(name)
        self.guard = None  # in the parent frame


class Region:
    """The items of one frame in run order: (guard, node) or (guard, Loop)."""

    def __init__(self, frame):
        self.frame = frame
        self.items = []


def analyze(nodes):
    """(root Region, value guards {(id(node), slot): guard}) of a partition, or raises NotStructured."""
    return _Analysis(nodes).run()


def pred_key(src, slot):
    """A predicate tensor by the value it carries: Identity chains lead back to one tensor (tf.cond switches
    its pivot on the predicate and its captured values on an Identity of it)."""
    while src.role is None and src.op_def.is_pass_through and len(src.inputs) == 1 and src.num_outputs == 1:
        src, slot = src.inputs[0]
    return (id(src), slot)


def _longer(a, b, node):
    if a[:len(b)] == b:
        return a
    if b[:len(a)] == a:
        return b
    raise NotStructured(f"{node.name} ({node.op_type}) reads values of unrelated conds ({a} and {b})")


class _Analysis:
    def __init__(self, nodes):
        self.nodes = nodes
        self.frames = LoopFrames(nodes)
        self.position = {id(n): i for i, n in enumerate(nodes)}
        self.guard = {}  # (id(node), slot) -> guard of that value, in the frame the value lives in
        self.node_guard = {}  # id(node) -> guard the node runs under, in its frame
        self.loops = {}  # frame name -> Loop

    def run(self):
        for node in self.nodes:
            self._check_frames(node)
        for node in self.nodes:
            self._visit(node)
        for loop in self.loops.values():
            if loop.loop_cond is None:
                raise NotStructured(f"while-loop frame {loop.name!r} has no LoopCond in this partition")
        return self._region(""), self.guard

    def _check_frames(self, node):
        frame = self.frames.frame_of[id(node)]
        for src in [s for s, _ in node.inputs] + list(node.control_inputs):
            if self.frames.out_frame[id(src)] != frame:
                raise NotStructured(f"{node.name} ({node.op_type}) in frame {frame!r} reads {src.name} from "
                                    f"frame {self.frames.out_frame[id(src)]!r}")
        if node.op_type in ("_Retval", "_Arg") and frame:
            raise NotStructured(f"{node.name} feeds or fetches inside while-loop frame {frame!r}")

    def _inputs_guard(self, node, data=True):
        guard = ()
        for src, slot in node.inputs if data else ():
            guard = _longer(guard, self.guard[(id(src), slot)], node)
        for src in node.control_inputs:
            guard = _longer(guard, self.node_guard[id(src)], node)
        return guard

    def _visit(self, node):
        role = node.role
        key = id(node)
        frame = self.frames.frame_of[key]
        if role == "merge":
            guard = self._merge(node, frame)
        elif role == "enter":
            self._enter(node)
            guard = ()  # its consumers are all in the child frame; the Loop keeps the guard in the parent
        elif node.op_type == "ControlTrigger":
            guard = ()  # it runs, live, once its inputs have run or been found dead: in every iteration
        else:
            if any(id(src) not in self.node_guard for src, _ in node.inputs):
                raise NotStructured(f"{node.name} ({node.op_type}) comes before one of its inputs in the plan")
            guard = self._inputs_guard(node)
        self.node_guard[key] = guard
        if role == "switch":
            pred = pred_key(*node.inputs[1])
            self.guard[(key, 0)] = guard + ((pred, False),)
            self.guard[(key, 1)] = guard + ((pred, True),)
            return
        for slot in range(node.num_outputs):
            self.guard[(key, slot)] = guard
        if role == "loop_cond":
            self._loop(frame, node).loop_cond = node
            if guard:
                raise NotStructured(f"the LoopCond {node.name} of {frame!r} runs under a cond {guard}")
        elif role == "next_iteration":
            cond = self._loop(frame, node).loop_cond
            if cond is None or guard != (((id(cond), 0), True),):
                raise NotStructured(f"NextIteration {node.name} of {frame!r} is not live exactly while the loop "
                                    f"goes on (guard {guard})")
        elif role == "exit":
            cond = self._loop(frame, node).loop_cond
            if cond is None or guard != (((id(cond), 0), False),):
                raise NotStructured(f"Exit {node.name} of {frame!r} is not live exactly when the loop ends")
            self.loops[frame].exits.append(node)
            self.node_guard[key] = self.loops[frame].guard  # its consumers are all in the parent frame
            for slot in range(node.num_outputs):
                self.guard[(key, slot)] = self.loops[frame].guard

    def _loop(self, frame, node):
        loop = self.loops.get(frame)
        if loop is None:
            raise NotStructured(f"{node.name} ({node.op_type}) is in frame {frame!r}, which no Enter here opens")
        return loop

    def _enter(self, node):
        guard = self._inputs_guard(node)
        name = node.attrs["frame_name"]
        loop = self.loops.get(name)
        if loop is None:
            loop = self.loops[name] = Loop(name, node.attrs.get("parallel_iterations", 10))
            loop.guard = guard
        elif loop.guard != guard:
            raise NotStructured(f"the Enters of {name!r} run under different conds ({loop.guard} and {guard})")
        loop.enters.append(node)
        constant = bool(node.attrs.get("is_constant", False))
        for slot in range(node.num_outputs):
            self.guard[(id(node), slot)] = ()
        for consumer in self._consumers(node):
            if (consumer.role == "merge") == constant:
                raise NotStructured(f"{'constant ' if constant else ''}Enter {node.name} feeds {consumer.name} "
                                    f"({consumer.op_type})")

    def _consumers(self, node):
        if not hasattr(self, "_readers"):
            self._readers = {}
            for n in self.nodes:
                for src in {id(s) for s, _ in n.inputs} | {id(c) for c in n.control_inputs}:
                    self._readers.setdefault(src, []).append(n)
        return self._readers.get(id(node), [])

    def _merge(self, node, frame):
        if node.control_inputs or len(node.inputs) != 2:
            raise NotStructured(f"Merge {node.name} has {len(node.inputs)} inputs and control inputs")
        roles = [src.role for src, _ in node.inputs]
        if "enter" in roles:
            if sorted(roles, key=str) != ["enter", "next_iteration"]:
                raise NotStructured(f"loop Merge {node.name} reads {roles}")
            enter = node.inputs[roles.index("enter")][0]
            following = node.inputs[roles.index("next_iteration")][0]
            self._loop(frame, node).merges.append((node, enter, following))
            return ()
        (a_src, a_slot), (b_src, b_slot) = node.inputs
        if id(a_src) not in self.node_guard or id(b_src) not in self.node_guard:
            raise NotStructured(f"Merge {node.name} comes before one of its inputs in the plan")
        a, b = self.guard[(id(a_src), a_slot)], self.guard[(id(b_src), b_slot)]
        if not a or not b or a[:-1] != b[:-1] or a[-1][0] != b[-1][0] or a[-1][1] == b[-1][1]:
            raise NotStructured(f"Merge {node.name} does not join the two branches of one cond ({a} and {b})")
        return a[:-1]

    def _region(self, frame):
        """The items of ``frame`` in an order that runs every input first, close to the plan's order.
        Enters and Exits are only names for values (the code generator aliases them), so they are no items."""
        region = Region(frame)
        entries = {}  # id(node) -> index of the item that computes it, for nodes this region depends on
        owners = []  # per item: (priority, guard, node or Loop)
        for node in self.nodes:
            if self.frames.frame_of[id(node)] == frame and node.role not in ("enter", "exit"):
                entries[id(node)] = len(owners)
                owners.append((self.position[id(node)], self.node_guard[id(node)], node))
        for name, loop in self.loops.items():
            if self.frames.parent.get(name, "") != frame:
                continue
            loop.body = self._region(name)
            index = len(owners)
            owners.append((max(self.position[id(e)] for e in loop.enters), loop.guard, loop))
            for node in self.nodes:  # the loop stands for its Enters, its Exits and everything inside it
                if node.role == "enter" and node.attrs["frame_name"] == name or name in self._frames_around(node):
                    entries[id(node)] = index
        region.items = self._ordered(owners, entries)
        return region

    def _frames_around(self, node):
        return self.frames.ancestors(self.frames.frame_of[id(node)])

    def _ordered(self, owners, entries):
        deps = [set() for _ in owners]
        for i, (_, _, owner) in enumerate(owners):
            for node in owner.enters if isinstance(owner, Loop) else [owner]:
                srcs = [s for s, _ in node.inputs if node.role != "merge" or s.role != "next_iteration"]
                for src in srcs + list(node.control_inputs):
                    j = entries.get(id(src))
                    if j is not None and j != i:
                        deps[i].add(j)
        waiting = [len(d) for d in deps]
        users = [[] for _ in owners]
        for i, d in enumerate(deps):
            for j in d:
                users[j].append(i)
        ready = [(owners[i][0], i) for i, n in enumerate(waiting) if not n]
        heapq.heapify(ready)
        out = []
        while ready:
            _, i = heapq.heappop(ready)
            out.append((owners[i][1], owners[i][2]))
            for j in users[i]:
                waiting[j] -= 1
                if not waiting[j]:
                    heapq.heappush(ready, (owners[j][0], j))
        if len(out) != len(owners):
            raise NotStructured("a value leaves a while loop and flows back into it")
        return out
