"""The dataflow executor: TF's algorithm for partitions with control flow or inter-op parallelism.

Nodes run when their inputs arrive, per (frame, iteration). Switch sends a value to one output and a
dead marker to the other; deadness propagates through ops; Merge forwards its first live input;
Enter moves a value into a child frame (a loop), NextIteration into the next iteration, Exit back to
the parent frame. At most ``parallel_iterations`` iterations of a frame are active at once.
Independent ready nodes run on a thread pool when ``num_threads`` > 1; a second thread is woken for
a kernel the cost model calls heavy (a BLAS kernel is not: it already uses every core) and goes back
to waiting when only light ones are left, or it stays when measured kernels are long enough to
overlap usefully.
Ready nodes run in the plan's order (``schedule.memory_order``: the one that lowers peak memory first).
A step ends when nothing is ready or running; each value is dropped once its last consumer has
taken it.

Per node, the step pays one lock hold (finishing the last node and taking the next share it), one heap
push and pop, and for a plain kernel a direct call: successor edges, their kinds and the output wrapping
are decided once per plan (``_Item``), so dispatch does no role tests or dict look-ups beyond the
per-iteration join records.

Memory planning (``memory_plan``) hands a plain kernel that accepts ``out=`` an input whose reference count
says that the node's inputs list is its only holder (the last reader in its frame and iteration), or a
buffer that such a kernel's value left when a plain node dropped it unreferenced.
"""

import collections
import itertools
import threading
import time
from heapq import heappop, heappush

import numpy as np

from tensorweave import errors
from tensorweave.runtime.executor_frames import DEAD, JOIN, MERGE, Frame, FrameState
from tensorweave.runtime.executor_linear import is_multi_output
from tensorweave.runtime.frame_check import check_frames
from tensorweave.runtime.kernels import instantiate, wrap_error
from tensorweave.runtime.memory_plan import MemoryPlan, keep_listed, offer_listed
from tensorweave.runtime.step import OpContext

_ASYNC = object()  # _process's answer when an asynchronous kernel will complete the node later
PARALLEL_NODE_SECONDS = 5e-5  # the mean kernel time from which overlapping kernels on threads pays
_FORWARDING = ("enter", "exit", "next_iteration", "loop_cond")


class _Item:
    """Static facts about one node, computed once per plan."""

    __slots__ = ("node", "index", "kernel_def", "compute", "role", "num_data_inputs", "num_control_inputs",
                 "out_edges", "control_out", "multi", "is_constant_enter", "frame_name", "parallel_iterations",
                 "transfer", "control_trigger", "num_inputs", "heavy", "receives", "priority",
                 "fanout", "join", "plain", "forwards", "single", "num_outputs", "may_block", "frame_op",
                 "offers", "slot", "keeps")


class DataflowExecutor:
    kind = "dataflow"

    def __init__(self, nodes, device, device_mgr, registries, config=None, num_threads=1, pool=None,
                 cost_model=None):
        self.device = device
        self.num_threads = num_threads
        self.pool = pool
        self.items = []
        by_id = {}
        for i, node in enumerate(nodes):
            item = _Item()
            item.node, item.index = node, i
            item.priority = i  # the plan's order: among ready nodes, the one that lowers peak memory first
            item.role = {"_Arg": "arg", "_Retval": "retval"}.get(node.op_type, node.op_def.executor_role)
            item.kernel_def = item.compute = None
            if item.role in (None,):
                item.kernel_def, item.compute = instantiate(node, device, device_mgr, registries, config)
            item.num_data_inputs = len(node.inputs)
            item.num_control_inputs = len(node.control_inputs)
            item.num_inputs = item.num_data_inputs + item.num_control_inputs
            item.out_edges = [[] for _ in range(node.num_outputs)]
            item.control_out = []
            item.multi = is_multi_output(node.op_def)
            item.transfer = node.op_type == "_Send"  # a Send runs even when dead, to tell its Recv
            item.receives = node.op_type == "_Recv"
            item.heavy = cost_model is not None and num_threads > 1 and cost_model.is_heavy(node, device) and not (
                device.is_host and node.op_def.is_intra_op_parallel)  # a BLAS kernel already uses every core
            item.control_trigger = node.op_type == "ControlTrigger"  # runs, and is live, even when dead
            item.is_constant_enter = item.role == "enter" and bool(node.attrs.get("is_constant", False))
            item.frame_name = node.attrs.get("frame_name") if item.role == "enter" else None
            item.parallel_iterations = node.attrs.get("parallel_iterations", 10) if item.role == "enter" else 0
            by_id[id(node)] = item
            self.items.append(item)
        for item in self.items:
            for slot, (src, out) in enumerate(item.node.inputs):
                by_id[id(src)].out_edges[out].append((item, slot))
            for c in item.node.control_inputs:
                by_id[id(c)].control_out.append(item)
        for item in self.items:
            _dispatch_facts(item)
        planning = config is None or config.graph_options.memory_planning_enabled()
        self.memory = _plan_memory(self.items) if planning else None  # the MemoryPlan, when planning is on
        self.roots = [it for it in self.items if not it.num_data_inputs and not it.num_control_inputs]
        if any(it.role in ("enter", "exit") for it in self.items):
            check_frames(self.items)
        self.seconds_per_node = None  # measured; decides whether overlapping kernels pays for the GIL
        self.enters_per_frame = collections.Counter(it.frame_name for it in self.items if it.role == "enter")
        self.parallel_per_frame = {it.frame_name: it.parallel_iterations for it in self.items if it.role == "enter"}

    def run(self, step, feeds, results):
        run = _Run(self, step, feeds, results)
        start = time.perf_counter()
        run.execute()
        if run.nodes_run:
            per_node = (time.perf_counter() - start) / run.nodes_run
            self.seconds_per_node = per_node if self.seconds_per_node is None else (self.seconds_per_node + per_node) / 2


def _plan_memory(items):
    """The straight-line executor's rules with no static last use; gives each plain taker its candidate
    inputs (``offers``) and its slot, and each plain node the takers' values it may keep (``keeps``)."""
    memory = MemoryPlan([it.node for it in items],
                        {id(it.node): (it.kernel_def, it.compute) for it in items if it.plain})
    for it in items:
        it.offers = memory.in_place_inputs.get(it.index) or None
        it.slot = memory.slot_at.get(it.index)
        it.keeps = (memory.kept_inputs[it.index] or None) if it.plain else None
    return memory


def _dispatch_facts(item):
    """What a step would otherwise work out per node: how a kernel is called, how its result becomes
    outputs, and each out-edge flattened to (slot, consumer, consumer's slot)."""
    kernel = item.kernel_def
    item.num_outputs = item.node.num_outputs
    item.single = item.num_outputs > 0 and not item.multi
    item.plain = item.role is None and not kernel.asynchronous and not kernel.context
    item.forwards = item.role == "merge" or item.role in _FORWARDING  # live inputs become its outputs
    item.may_block = kernel is not None and kernel.context and not kernel.asynchronous
    item.frame_op = item.role in ("enter", "exit", "next_iteration")
    # as a consumer: MERGE fires on its first live input, JOIN waits for all, else it runs at once
    item.join = MERGE if item.role == "merge" else (JOIN if item.num_inputs > 1 else None)
    item.fanout = [(slot, dst, dst_slot) for slot, edges in enumerate(item.out_edges) for dst, dst_slot in edges]
    item.offers = item.slot = item.keeps = None


class _Run(FrameState):
    """The dynamic state of one step through one partition."""

    def __init__(self, ex, step, feeds, results):
        self.ex = ex
        self.step = step
        self.feeds = feeds
        self.results = results
        self.filled = [False] * len(results)
        self.lock = threading.RLock()  # taken directly: Condition's own ``with`` is a Python-level call
        self.cv = threading.Condition(self.lock)
        self.ready = []  # heap of (plan position, arrival, item, frame, iteration, dead, inputs)
        self.arrivals = itertools.count()
        self.in_flight = 0
        self.waiting = 0  # threads blocked in _drain; nobody needs a notify when there are none
        self.active = 0  # threads running a kernel that cannot block; they pick up new work themselves
        self.nodes_run = 0
        # Threads overlap kernels only when kernels are long enough to release the GIL usefully; with
        # short ones a second thread only contends. Kernels that may block always free their thread.
        self.eager = ex.num_threads > 1 and (ex.seconds_per_node or 0.0) >= PARALLEL_NODE_SECONDS
        self.error = None
        self.unlocated = False  # the error is the step's cancellation, not yet tied to an op
        self.stopped_at = None  # after a cancellation, the node a busy step was at
        self.stats = step.stats
        self.root = Frame("", None, 0, 1, 0)

    # ---- driving ----------------------------------------------------------------------
    def execute(self):
        cancellation = self.step.cancellation
        token = cancellation.register(self._cancelled)  # a deadline or a closed session stops a busy step too
        if token is None:
            self._cancelled(cancellation.error)
        try:
            with self.lock:
                for item in self.ex.roots:
                    self._schedule(item, self.root, 0, False, [])
            helpers = []
            if self.ex.num_threads > 1 and self.ex.pool is not None:
                helpers = [self.ex.pool.submit(self._drain, True) for _ in range(self.ex.num_threads - 1)]
            self._drain()
            for h in helpers:
                if not h.cancel():  # a helper still queued behind other steps' work is not waited for
                    h.result()
        finally:
            if token is not None:
                cancellation.deregister(token)
        if self.error is not None:
            if self.unlocated and self.stopped_at is not None:
                raise wrap_error(self.stopped_at, self.error)  # no kernel failed: name where the step was
            raise self.error
        for item in self.ex.items:
            if item.role == "retval" and not self.filled[item.node.attrs["index"]]:
                src = item.node.inputs[0][0]
                raise errors.InvalidArgumentError(None, item.node.source, (
                    f"fetch {item.node.source.name if item.node.source else item.node.name} was never computed: "
                    f"its producer {src.name!r} ({src.op_type}) never ran. This happens when a loop or Merge "
                    f"never receives a live input; check the control-flow construction."))

    def _drain(self, helper=False):
        lock, cv, ready, finish = self.lock, self.cv, self.ready, self._finish
        untraced = self.stats is None
        item = outputs = None  # the node just run, completed under the next lock hold
        counted = False  # this thread counts in ``active``; kept across nodes that cannot block
        ran = 0
        while True:
            with lock:
                if item is not None:
                    finish(item, frame, it, dead, outputs)
                    outputs = None
                if not ready or helper and self._leave(counted):
                    if counted:
                        self.active -= 1
                        counted = False
                    while (not ready or helper and self._leave(0)) and self.in_flight > 0:
                        self.waiting += 1
                        cv.wait()
                        self.waiting -= 1
                    if not ready:
                        self.nodes_run += ran
                        if self.waiting:
                            cv.notify_all()
                        return
                _, _, item, frame, it, dead, inputs = heappop(ready)
                ran += 1
                if item.may_block:
                    if counted:
                        self.active -= 1
                        counted = False
                    if ready and self.waiting:
                        cv.notify()  # it may block (a queue, a Recv): let another thread go on
                elif not counted:
                    self.active += 1
                    counted = True
            if untraced and not dead and self.error is None:  # the common cases of _process, without its tests
                if item.plain:
                    try:
                        if item.offers is None:
                            out = item.compute(*inputs)
                        else:  # offered before the call: the call's own argument tuple would count as a holder
                            buffer = offer_listed(item.slot, inputs, item.offers)
                            out = item.compute(*inputs, out=buffer)
                            buffer = None
                    except Exception as exc:
                        self._fail(wrap_error(item.node, exc))
                    else:
                        outputs = [out] if item.single else (list(out) if item.num_outputs else [])
                        del out
                        if item.keeps is not None:
                            keep_listed(inputs, item.keeps)
                    inputs = None
                    continue
                if item.forwards:
                    outputs, inputs = inputs, None
                    continue
            outputs = self._process(item, frame, it, dead, inputs)
            inputs = None
            if outputs is _ASYNC:
                item = outputs = None

    def _leave(self, counted):
        """Whether a helper thread leaves the ready nodes to the thread already running: overlapping
        light kernels only contends for the GIL, so a helper woken for a heavy kernel goes back to
        waiting once the next one is light (with the lock held, ``ready`` not empty)."""
        return not self.eager and self.active > counted and not self.ready[0][2].heavy

    def _schedule(self, item, frame, it, dead, inputs):
        self._push(frame.iterations[it], item, frame, it, dead, inputs)

    def _push(self, st, item, frame, it, dead, inputs):
        """``_schedule`` for a caller that already holds the iteration's state."""
        st.outstanding_ops += 1
        self.in_flight += 1
        heappush(self.ready, (item.priority, next(self.arrivals), item, frame, it, dead, inputs))
        if self.waiting and (self.eager or item.heavy or not self.active):
            self.cv.notify()

    # ---- running one node --------------------------------------------------------------
    def _process(self, item, frame, it, dead, inputs):
        """Runs one node; returns its outputs (None if it failed), or _ASYNC if a callback completes it."""
        if self.error is not None:
            if self.stopped_at is None:
                self.stopped_at = item.node  # taken just as the step was cancelled
            return None
        role = item.role
        stats = self.stats
        start = time.perf_counter() if stats is not None else 0.0
        try:
            if dead and not item.transfer and not item.control_trigger:
                if role == "retval":
                    self._store_result(item, DEAD)
                outputs = [DEAD] * item.num_outputs
            elif role is None:
                if item.kernel_def.asynchronous:
                    ctx = OpContext(self.step, item.node, self.ex.device, frame.frame_id, it)
                    item.compute(ctx, lambda result: self._async_done(item, frame, it, dead, result, start), *inputs)
                    return _ASYNC
                if item.kernel_def.context:
                    out = item.compute(OpContext(self.step, item.node, self.ex.device, frame.frame_id, it), *inputs)
                else:
                    out = item.compute(*inputs)
                outputs = [out] if item.single else (list(out) if item.num_outputs else [])
            elif role == "switch":
                # The predicate is read on the host (TF keeps it in host memory): through the device, so a GPU's
                # value is read after the kernel that computes it, not from its stream's memory too early.
                predicate = self.ex.device.to_host(inputs[1])
                if np.ndim(predicate) != 0:
                    raise errors.InvalidArgumentError(None, None, (
                        f"the predicate of a Switch (tf.cond) must be a scalar bool, but it has shape "
                        f"{list(np.shape(predicate))}; reduce it with tf.reduce_any or tf.reduce_all"))
                outputs = [DEAD, inputs[0]] if bool(predicate) else [inputs[0], DEAD]
            elif role == "merge" or role in _FORWARDING:
                outputs = inputs
            elif role == "arg":
                outputs = [self.ex.device.from_host(self.feeds[item.node.attrs["index"]])]
            else:  # retval
                self._store_result(item, inputs[0])
                outputs = []
        except Exception as exc:
            self._fail(wrap_error(item.node, exc))
            return None
        if stats is not None:
            stats.record(item.node, self.ex.device.name, start, time.perf_counter(), threading.get_ident(), outputs)
        return outputs

    def _async_done(self, item, frame, it, dead, result, start):
        if isinstance(result, BaseException):
            self._fail(wrap_error(item.node, result))
            self._complete(item, frame, it, dead, None)
            return
        outputs = [result] if item.single else (list(result) if item.num_outputs else [])
        if item.receives and result is DEAD:
            dead = True  # a dead tensor from another device: the Recv is dead too
        if self.stats is not None:
            self.stats.record(item.node, self.ex.device.name, start, time.perf_counter(),
                              threading.get_ident(), outputs)
        self._complete(item, frame, it, dead, outputs)

    def _store_result(self, item, value):
        if value is DEAD:
            name = item.node.source.name if item.node.source is not None else item.node.name
            raise errors.InvalidArgumentError(None, item.node.source, (
                f"the fetched tensor from {name!r} is dead: it lies on the untaken branch of a Switch "
                f"(tf.cond) in this step, so it has no value. Fetch the cond's output instead."))
        idx = item.node.attrs["index"]
        self.results[idx] = self.ex.device.to_host(value)
        self.filled[idx] = True

    def _fail(self, error):
        with self.lock:
            if self.error is None or self.unlocated:  # a kernel's own error says where the step waited
                self.error, self.unlocated = error, False
        self.step.cancel(error)

    def _cancelled(self, error):
        """The step was cancelled (a deadline, a closed session, another partition's error): no more
        nodes run, and the in-flight ones end as their kernels see the cancellation."""
        with self.lock:
            if self.error is None:
                self.error, self.unlocated = error, True
                if self.ready:  # the node it would have run next says where a busy step was
                    self.stopped_at = self.ready[0][2].node

    def _complete(self, item, frame, it, dead, outputs):
        with self.lock:
            self._finish(item, frame, it, dead, outputs)

    def _finish(self, item, frame, it, dead, outputs):
        """Propagates a node's outputs and retires it (with the lock held)."""
        if outputs is not None:
            if self.error is not None:
                if self.stopped_at is None:
                    self.stopped_at = item.node  # it ran as the step was cancelled: its outputs go nowhere
            elif item.frame_op:
                self._propagate(item, frame, it, outputs, dead and not item.control_trigger)
            else:
                self._activate(item, outputs, dead and not item.control_trigger, frame, it)
        st = frame.iterations[it]
        st.outstanding_ops -= 1
        if not st.outstanding_ops and frame.parent is not None:
            self._cleanup(frame, it)
        self.in_flight -= 1
        if self.waiting and (self.in_flight == 0 or self.ready and (self.eager or not self.active)):
            self.cv.notify_all()
