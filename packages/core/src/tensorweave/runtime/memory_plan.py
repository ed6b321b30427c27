"""Memory planning for the straight-line executor: a kernel that accepts ``out=`` gets a buffer to write into.

A kernel declares it with ``compute.accepts_out = True``; it then takes ``out``, None or a C-contiguous,
writeable array nobody else holds, and writes its result there when dtype and shape fit (else ignores it).
The buffer is, first, an input whose value dies at this node (in place) and, failing that, one kept from an
earlier step: when such a kernel's value dies unreferenced, its buffer waits in the slot of the node's
group (the node and the out-taking producers it may write over, so a chain of in-place nodes shares one
buffer) for the next step. A buffer is handed over only when its reference count says that the executor's
one variable is its only holder and it owns its memory: a fetched value (the results hold it), a fed value,
a variable's or a constant's array, a view, or a value another consumer still reads is never written over.
Feeds, constants, variables and received values (an OpDef's ``outputs_borrowed``, ``is_stateful``) are left
out before counting, too.

The structured executor (plain conds and loops compiled to one function) offers only dying inputs: a value dies
at a node when no later line of the function reads its variable and every line that binds the variable sits in
the same loop body as the node (a value from outside a loop is read again by the next iteration); the
reference count then rules out other holders as above (``InPlaceOffers``).

The dataflow executor (control flow) plans the same way with no static last use: its values sit in each
waiting consumer's inputs list, a value NextIteration carries to the next iteration or a constant Enter
gives every iteration is held by the frame, so the count alone says that the running node is the last
reader in every frame and iteration (``offer_listed``); a taker's value is kept when a node that ran a
kernel drops it unreferenced (``keep_listed``), for the next iteration or step.
"""

import sys

import numpy as np

SMALL_BYTES = 4 << 10  # outputs known to be smaller get no offers (numpy caches small allocations itself)
KEEP_MIN_BYTES = 1 << 20  # smaller ones come as fast, and cache-warm, from numpy's and malloc's free lists


class BufferSlot:
    """Buffers kept for one group between steps, and what happened to the offers (a debug record)."""

    __slots__ = ("buffers", "capacity", "wanted", "in_place", "reused")

    def __init__(self, capacity):
        self.buffers = []
        self.capacity = capacity
        self.wanted = False  # an offer once found nothing: dying values are worth keeping
        self.in_place = 0  # offers of a dying input
        self.reused = 0  # offers of a buffer kept from an earlier step


def _refs_as_offered(*dying):
    return _refs_in(dying)


def _refs_in(dying):
    for v in dying:  # as _sole_dying sees them: the tuple the caller's call made is passed on, not copied
        return sys.getrefcount(v)


def _refs_as_kept(slot, v):
    return sys.getrefcount(v)


def _refs_as_listed(slot, inputs, positions):
    for k in positions:
        v = inputs[k]
        return sys.getrefcount(v)


def _probe():
    value = np.empty(2)
    return _refs_as_offered(value), _refs_as_kept(None, value), _refs_as_listed(None, [np.empty(2)], (0,))


OFFERED_SOLE, KEPT_SOLE, LISTED_SOLE = _probe()  # a value held by one variable of the executor (by one list)


def _owns(v):
    return v.__class__ is np.ndarray and v.base is None and v.flags.c_contiguous and v.flags.writeable


def offer(slot, *dying):
    """A buffer for the kernel's result: a dying input held by nobody else, else a kept one, else None."""
    out = _sole_dying(slot, dying)
    return _kept(slot) if out is None else out


def offer_in_place(slot, *dying):
    """``offer`` without kept buffers, for the structured executor, which keeps none (looking for one cost a
    raised IndexError per offer)."""
    return _sole_dying(slot, dying)


def _sole_dying(slot, dying):
    """The first dying input held by nobody else that owns its memory, or None."""
    for v in dying:
        if sys.getrefcount(v) == OFFERED_SOLE and _owns(v):  # counted as in _refs_as_offered
            slot.in_place += 1
            return v
    return None


def offer_listed(slot, inputs, positions):
    """``offer`` for the dataflow executor: the dying values lie at ``positions`` of the node's inputs
    list, which must be their only holder."""
    for k in positions:
        v = inputs[k]
        if sys.getrefcount(v) == LISTED_SOLE and _owns(v):  # counted as in _refs_as_listed
            slot.in_place += 1
            return v
    return _kept(slot)


def _kept(slot):
    buffers = slot.buffers
    try:
        buffer = buffers.pop() if buffers else None  # one pop: another thread may take the last one
    except IndexError:
        buffer = None
    if buffer is None:
        slot.wanted = True
        return None
    slot.reused += 1
    return buffer


def keep(slot, v):
    """Keeps a dying value's buffer for the next step when nobody else holds it and an offer wanted one
    (a large fresh allocation maps new pages: measured, the page faults cost more than the reuse)."""
    if sys.getrefcount(v) == KEPT_SOLE and _worth_keeping(slot, v):
        slot.buffers.append(v)


def keep_listed(inputs, keeps):
    """``keep`` for the dataflow executor: ``keeps`` holds (position, slot) of inputs that takers made;
    each is kept when the node's inputs list, about to be dropped, is its only holder."""
    for k, slot in keeps:
        v = inputs[k]
        if sys.getrefcount(v) == LISTED_SOLE and _worth_keeping(slot, v):  # counted as in _refs_as_listed
            slot.buffers.append(v)


def _worth_keeping(slot, v):
    return slot.wanted and len(slot.buffers) < slot.capacity and _owns(v) and v.nbytes >= KEEP_MIN_BYTES


class MemoryPlan:
    """Which nodes get an ``out=`` offer, from which dying inputs, and which values are kept (per slot).
    Without ``last_use`` (the dataflow executor) every input that may be written over is a candidate and
    the reference count decides at run time whether it dies there."""

    def __init__(self, nodes, kernels, last_use=None):
        index = {id(n): i for i, n in enumerate(nodes)}
        takers = {i for i, n in enumerate(nodes) if id(n) in kernels and takes_out(n, *kernels[id(n)])}
        self.in_place = {}  # position -> names of input values that die there and may be written over
        self.in_place_inputs = {}  # position -> their input positions (the first of each)
        self.kept_inputs = {}  # position of any node -> (input position, slot) of the takers' values it reads
        group = {i: i for i in takers}
        for i in takers:
            node = nodes[i]
            names, positions = [], []
            for k, (src, slot) in enumerate(node.inputs):
                key = (index[id(src)], slot)
                name = f"v{key[0]}_{slot}"
                if (last_use is None or last_use.get(key) == i) and name not in names and \
                        may_write_over(src, slot, node):
                    names.append(name)
                    positions.append(k)
                    if key[0] in takers:
                        _union(group, i, key[0])
            self.in_place[i] = names
            self.in_place_inputs[i] = tuple(positions)
        roots = sorted({_find(group, i) for i in takers})
        size = {r: sum(1 for i in takers if _find(group, i) == r) for r in roots}
        self.slots = {r: BufferSlot(size[r]) for r in roots}
        self.slot_of = {i: f"s{_find(group, i)}" for i in takers}
        self.slot_at = {i: self.slots[_find(group, i)] for i in takers}  # position -> its BufferSlot
        self.kept = {(i, 0): self.slot_of[i] for i in takers}  # value -> slot its buffer waits in
        for i, node in enumerate(nodes):
            firsts = {}
            for k, (src, slot) in enumerate(node.inputs):
                firsts.setdefault((index[id(src)], slot), k)
            self.kept_inputs[i] = tuple((k, self.slot_at[key[0]]) for key, k in firsts.items() if key in self.kept)

    def env(self):
        env = {f"s{r}": slot for r, slot in self.slots.items()}
        env["_offer"], env["_keep"] = offer, keep
        return env

    def stats(self):
        """Offers made, summed over slots: {"in_place": of dying inputs, "reused": of kept buffers}."""
        return _offer_stats(self.slots.values())


class InPlaceOffers:
    """One BufferSlot per node offered its dying inputs (the structured executor's plan: no buffer is kept
    between steps, where loops would make the slot's group unclear)."""

    def __init__(self):
        self.slots = {}

    def slot_name(self, position):
        """The name the compiled function finds the node's slot under."""
        self.slots.setdefault(position, BufferSlot(0))
        return f"s{position}"

    def env(self):
        env = {f"s{i}": slot for i, slot in self.slots.items()}
        env["_offer"] = offer_in_place
        return env

    def stats(self):
        """Offers made, summed over slots: {"in_place": of dying inputs, "reused": always 0 here}."""
        return _offer_stats(self.slots.values())


def _offer_stats(slots):
    """{"in_place": offers of dying inputs, "reused": of kept buffers}, summed over ``slots``."""
    return {k: sum(getattr(s, k) for s in slots) for k in ("in_place", "reused")}


def takes_out(node, kernel_def, compute):
    """The node's kernel accepts ``out=`` and its output may be large enough to gain from one."""
    args = node.op_def.output_args
    return (getattr(compute, "accepts_out", False) and not kernel_def.context and len(args) == 1
            and not args[0].is_list and not _small(node))


def _small(node):
    """An output whose static shape says it is under SMALL_BYTES: an offer would cost more than it saves."""
    size = known_bytes(node)
    return size is not None and size < SMALL_BYTES


def known_bytes(node):
    """The size of the node's first output when its static shape is fully known, else None."""
    dims = node.output_shapes[0].as_tuple() if node.output_shapes[0] is not None else None
    if dims is None or None in dims:
        return None
    size = node.output_dtypes[0].size
    for d in dims:
        size *= d
    return size


def may_write_over(src, slot, node):
    """Output ``slot`` of ``src`` may become ``node``'s result buffer: not borrowed, stateful or control flow's,
    and of the result's dtype."""
    return (not src.op_def.outputs_borrowed and not src.is_stateful and src.role is None
            and src.output_dtypes[slot] == node.output_dtypes[0])


def _find(group, i):
    while group[i] != i:
        group[i] = group[group[i]]
        i = group[i]
    return i


def _union(group, a, b):
    group[_find(group, a)] = _find(group, b)
