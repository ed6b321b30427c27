"""Which while-loop frame each node of a placed PlanGraph runs in (TF's ControlFlowInfo), so the
partitioner can carry a loop across devices."""


class LoopFrames:
    """``frame_of[id(node)]``: the frame a node runs in ('' at the top level); ``out_frame``: the frame
    its outputs live in (an Enter's child frame, an Exit's parent); ``parent``, ``loop_cond`` and
    ``parallel_iterations`` per frame name."""

    def __init__(self, order):
        self.frame_of, self.out_frame = {}, {}
        self.parent, self.loop_cond, self.parallel_iterations = {}, {}, {}
        for node in order:
            frame = ""
            for src in [s for s, _ in node.inputs] + list(node.control_inputs):
                if src.role == "next_iteration" and node.role == "merge" or id(src) not in self.out_frame:
                    continue
                frame = self.out_frame[id(src)]
                break
            self.frame_of[id(node)] = frame
            self.out_frame[id(node)] = self._out(node, frame)
            if node.role == "loop_cond":
                self.loop_cond[frame] = node

    def _out(self, node, frame):
        if node.role == "enter":
            name = node.attrs["frame_name"]
            self.parent.setdefault(name, frame)
            self.parallel_iterations.setdefault(name, node.attrs.get("parallel_iterations", 10))
            return name
        if node.role == "exit":
            return self.parent.get(frame, "")
        return frame

    def ancestors(self, frame):
        """The frame and its enclosing frames, innermost first (the top level excluded)."""
        out = []
        while frame:
            out.append(frame)
            frame = self.parent.get(frame, "")
        return out

    def devices_per_frame(self, nodes):
        """frame -> devices that run a node in it or enter it."""
        found = {}
        for node in nodes:
            for frame in {self.frame_of.get(id(node), ""), self.out_frame.get(id(node), "")}:
                if frame:
                    found.setdefault(frame, set()).add(node.device)
        return found
