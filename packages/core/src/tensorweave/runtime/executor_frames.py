"""Frames and iterations of the dataflow executor: how values move between nodes under control flow.

Per (frame, iteration) the executor counts each node's missing inputs. Switch outputs a dead marker on
its untaken side and deadness propagates; Merge fires on its first live input (or dead when all are);
Enter starts or joins a child frame for the current iteration (a constant Enter reaches every
iteration); NextIteration starts iteration i+1 unless ``parallel_iterations`` are already running;
Exit returns to the parent frame, and an Exit dead in the last iteration is passed on when the frame
finishes. The methods run with the executor's lock held.
"""

import numpy as np


class _Dead:
    """The marker a dead tensor carries (the untaken side of a Switch and everything after it)."""

    def __repr__(self):
        return "DEAD"


DEAD = _Dead()
MERGE, JOIN = "merge", "join"  # how a consumer takes an input: Merge's rule, or waiting for all of them


class IterState:
    """One iteration's partly-arrived inputs: ``inputs`` holds a [missing, any dead, values] record per
    waiting node (one dict hit per arrival); ``pending`` and ``dead`` count Merges' inputs."""

    __slots__ = ("pending", "dead", "inputs", "merge_live", "merge_done", "outstanding_ops", "outstanding_frames")

    def __init__(self):
        self.pending = {}
        self.dead = {}
        self.inputs = {}
        self.merge_live = {}
        self.merge_done = set()
        self.outstanding_ops = 0
        self.outstanding_frames = 0


class Frame:
    __slots__ = ("frame_id", "name", "parent", "parent_iter", "max_parallel", "iterations", "iteration_count",
                 "num_outstanding_iterations", "num_pending_inputs", "inv_values", "dead_exits",
                 "next_iter_roots", "children")

    def __init__(self, name, parent, parent_iter, max_parallel, num_pending_inputs):
        self.name = name
        self.parent = parent
        self.parent_iter = parent_iter
        self.frame_id = "" if parent is None else f"{parent.frame_id}/{name};{parent_iter}"
        self.max_parallel = max(1, max_parallel)
        self.iterations = {0: IterState()}
        self.iteration_count = 0
        self.num_outstanding_iterations = 1
        self.num_pending_inputs = num_pending_inputs
        self.inv_values = []
        self.dead_exits = []
        self.next_iter_roots = []
        self.children = {}


class FrameState:
    """The frame and iteration bookkeeping a step's run mixes in (it calls ``self._schedule`` and ``self._push``)."""

    def _propagate(self, item, frame, it, outputs, node_dead):
        role = item.role
        if role == "enter":
            child = frame.children.get((item.frame_name, it))
            if child is None:
                child = Frame(item.frame_name, frame, it, self.ex.parallel_per_frame[item.frame_name],
                               self.ex.enters_per_frame[item.frame_name])
                frame.children[(item.frame_name, it)] = child
                frame.iterations[it].outstanding_frames += 1
            if item.is_constant_enter:
                child.inv_values.append((item, outputs, node_dead))
                for i in list(child.iterations):
                    self._activate(item, outputs, node_dead, child, i)
            else:
                self._activate(item, outputs, node_dead, child, 0)
            child.num_pending_inputs -= 1
            if 0 in child.iterations and child.iterations[0].outstanding_ops == 0:
                self._cleanup(child, 0)
        elif role == "exit":
            if outputs[0] is DEAD:
                if it == frame.iteration_count:
                    frame.dead_exits.append(item)
            else:
                self._activate(item, outputs, False, frame.parent, frame.parent_iter)
        elif role == "next_iteration":
            if outputs[0] is DEAD:
                return  # deadness does not cross iterations
            if it == frame.iteration_count and frame.num_outstanding_iterations >= frame.max_parallel:
                frame.next_iter_roots.append((item, outputs))
            else:
                if it == frame.iteration_count:
                    self._increment_iteration(frame)
                self._activate(item, outputs, False, frame, it + 1)
        else:
            self._activate(item, outputs, node_dead, frame, it)

    def _activate(self, item, outputs, node_dead, frame, it):
        st = frame.iterations[it]
        waiting = st.inputs
        for slot, dst, dst_slot in item.fanout:
            value = outputs[slot]
            join = dst.join
            if join is None:  # the common case: nothing to wait for
                self._push(st, dst, frame, it, value is DEAD, [value])
            elif join is JOIN:
                key = dst.index
                record = waiting.get(key)
                if record is None:
                    record = waiting[key] = [dst.num_inputs, False, [None] * dst.num_data_inputs]
                record[2][dst_slot] = value
                if value is DEAD:
                    record[1] = True
                record[0] -= 1
                if not record[0]:
                    del waiting[key]
                    self._push(st, dst, frame, it, record[1], record[2])
            else:
                self._merge_input(dst, st, frame, it, value, dst_slot, value is DEAD, from_enter=item.role == "enter")
        for dst in item.control_out:
            join = dst.join
            if join is MERGE:
                key = dst.index
                pending = st.pending.get(key, dst.num_control_inputs) - 1
                st.pending[key] = pending
                self._maybe_fire_merge(dst, st, frame, it, from_enter=False, last_dead=False)
            elif join is None:
                self._push(st, dst, frame, it, node_dead, [])
            else:
                key = dst.index
                record = waiting.get(key)
                if record is None:
                    record = waiting[key] = [dst.num_inputs, False, [None] * dst.num_data_inputs]
                if node_dead:
                    record[1] = True
                record[0] -= 1
                if not record[0]:
                    del waiting[key]
                    self._push(st, dst, frame, it, record[1], record[2])

    def _merge_input(self, dst, st, frame, it, value, slot, is_dead, from_enter):
        key = dst.index
        if key in st.merge_done:
            return
        if key not in st.pending:
            st.pending[key] = dst.num_control_inputs
        if is_dead:
            st.dead[key] = st.dead.get(key, 0) + 1
        elif key not in st.merge_live:
            st.merge_live[key] = (value, slot)
        self._maybe_fire_merge(dst, st, frame, it, from_enter, is_dead)

    def _maybe_fire_merge(self, dst, st, frame, it, from_enter, last_dead):
        key = dst.index
        if key in st.merge_done or st.pending.get(key, dst.num_control_inputs) > 0:
            return
        live = st.merge_live.get(key)
        if live is not None:
            inputs, dead = [live[0], np.int32(live[1])], False
        elif st.dead.get(key, 0) >= dst.num_data_inputs or (from_enter and last_dead):
            inputs, dead = [DEAD, DEAD], True
        else:
            return
        st.merge_done.add(key)
        st.merge_live.pop(key, None)
        st.dead.pop(key, None)
        self._schedule(dst, frame, it, dead, inputs)

    def _increment_iteration(self, frame):
        frame.iteration_count += 1
        n = frame.iteration_count
        frame.iterations[n] = IterState()
        frame.num_outstanding_iterations += 1
        frame.dead_exits = []
        deferred, frame.next_iter_roots = frame.next_iter_roots, []
        for item, outputs in deferred:
            self._activate(item, outputs, False, frame, n)
        for item, outputs, dead in frame.inv_values:
            self._activate(item, outputs, dead, frame, n)

    def _iteration_done(self, frame, it):
        st = frame.iterations.get(it)
        if st is None or st.outstanding_ops or st.outstanding_frames:
            return False
        if it == 0:
            return frame.num_pending_inputs == 0
        return (it - 1) not in frame.iterations

    def _cleanup(self, frame, it):
        if frame.parent is None:
            return
        while it <= frame.iteration_count and self._iteration_done(frame, it):
            del frame.iterations[it]
            frame.num_outstanding_iterations -= 1
            it += 1
            if frame.next_iter_roots:
                self._increment_iteration(frame)
        if frame.num_pending_inputs == 0 and frame.num_outstanding_iterations == 0:
            self._delete_frame(frame)

    def _delete_frame(self, frame):
        parent, pit = frame.parent, frame.parent_iter
        for item in frame.dead_exits:
            self._activate(item, [DEAD] * item.node.num_outputs, True, parent, pit)
        del parent.children[(frame.name, pit)]
        st = parent.iterations[pit]
        st.outstanding_frames -= 1
        if st.outstanding_ops == 0 and st.outstanding_frames == 0:
            self._cleanup(parent, pit)
