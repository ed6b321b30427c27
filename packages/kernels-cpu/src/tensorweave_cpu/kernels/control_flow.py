"""Kernels of the control-flow support ops: per-step stacks and TensorArrays, Assert and Print.

Stacks and TensorArrays live in the step's container (``ctx.step.step_resource``), one per creating
op per frame and iteration, so concurrent steps never share them. Kernels use ``xp`` (numpy here,
cupy on a GPU) so a device package can register the same functions.
"""

import itertools
import logging
import sys
import threading

import numpy as np

from tensorweave.extension import KernelSet, Resource, ResourceHandle, errors

KERNELS = KernelSet("CPU")


def _fail(message):
    return errors.InvalidArgumentError(None, None, message)


def _step_handle(ctx, make):
    """The handle of this node's per-step resource (one per frame and iteration it runs in)."""
    key = (ctx.node.name, ctx.frame_id, ctx.iteration)
    return ResourceHandle(ctx.device.name, "_step", ctx.node.name, ctx.step.step_resource(key, make))


# ---- stacks ------------------------------------------------------------------------------------------
class Stack(Resource):
    def __init__(self, name, max_size):
        self.name = name
        self.max_size = max_size
        self.items = []
        self.lock = threading.Lock()

    def push(self, value):
        """Checks a bounded stack's size under the lock (the kernel appends to an unbounded one itself)."""
        with self.lock:
            if 0 <= self.max_size <= len(self.items):
                raise _fail(f"stack {self.name!r} is full: it holds its maximum of {self.max_size} elements")
            self.items.append(value)

    def empty_error(self):
        return _fail(f"pop from the empty stack {self.name!r}: a value the backward loop needs was never saved "
                     f"by the forward loop")

    def close(self, error=None):
        self.items = []

    def debug_string(self):
        return f"Stack({self.name}, {len(self.items)} items)"


@KERNELS.register("StackV2", context=True)
def _stack_create(ctx, max_size):
    return _step_handle(ctx, lambda: Stack(ctx.node.name, int(max_size)))


@KERNELS.register("StackPushV2")
def _stack_push(handle, elem):
    stack = handle.resource
    if stack.max_size < 0:  # unbounded, as every gradient stack: list.append is atomic, no lock or call (a loop's
        stack.items.append(elem)  # backward pass pushes and pops thousands of times a step)
    else:
        stack.push(elem)
    return elem


@KERNELS.register("StackPopV2")
def _stack_pop(handle):
    try:
        return handle.resource.items.pop()  # atomic
    except IndexError:
        raise handle.resource.empty_error() from None


@KERNELS.register("StackCloseV2")
def _stack_close(handle):
    handle.resource.close()


# ---- TensorArrays --------------------------------------------------------------------------------------
class TensorArrayResource(Resource):
    """The elements of one TensorArray for one step. Gradient arrays sum repeated writes."""

    def __init__(self, name, dtype, size, dynamic_size, clear_after_read, element_shape, aggregate=False,
                 forward=None):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.values = [None] * size
        self.shapes = [None] * size  # shapes of written elements (kept after a read clears the value)
        self.cleared = [False] * size
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.element_shape = element_shape
        self.aggregate = aggregate
        self.forward = forward
        self.grads = {}
        self.lock = threading.RLock()

    def size(self):
        return len(self.values)

    def _index(self, index, writing):
        if index < 0 or (index >= len(self.values) and not (writing and self.dynamic_size)):
            raise _fail(f"TensorArray {self.name!r}: index {index} is out of range for its size {len(self.values)}"
                        + ("" if self.dynamic_size else "; create it with dynamic_size=True to let it grow"))
        if index >= len(self.values):
            grow = index + 1 - len(self.values)
            self.values += [None] * grow
            self.shapes += [None] * grow
            self.cleared += [False] * grow
        return index

    def write(self, index, value, xp):
        with self.lock:
            i = self._index(index, writing=True)
            shape = tuple(value.shape)
            if self.element_shape is not None and not self.element_shape.admits(shape):
                raise _fail(f"TensorArray {self.name!r}: cannot write an element of shape {list(shape)} at index "
                            f"{i}; its elements have shape {self.element_shape}")
            if self.values[i] is not None or self.cleared[i]:
                if not self.aggregate:
                    raise _fail(f"TensorArray {self.name!r}: could not write to index {i} because it has already "
                                f"been written to")
                if self.values[i] is not None:
                    if self.shapes[i] != shape:
                        raise _fail(f"TensorArray {self.name!r}: gradients written to index {i} have shapes "
                                    f"{list(self.shapes[i])} and {list(shape)}")
                    value = self.values[i] + value
            self.values[i] = xp.asarray(value, dtype=self.dtype)
            self.shapes[i] = shape
            self.cleared[i] = False

    def read(self, index, xp):
        with self.lock:
            i = self._index(index, writing=False)
            value = self.values[i]
            if value is None:
                if self.cleared[i]:
                    raise _fail(f"TensorArray {self.name!r}: could not read index {i} twice because it was "
                                f"cleared after the first read (create it with clear_after_read=False)")
                return xp.zeros(self._zero_shape(i), dtype=self.dtype)
            if self.clear_after_read:
                self.values[i] = None
                self.cleared[i] = True
            return value

    def _zero_shape(self, i):
        """An element never written reads as zeros where its shape is known (gradient arrays)."""
        for shape in (self.shapes[i], self.forward.shapes[i] if self.forward is not None and
                      i < len(self.forward.shapes) else None):
            if shape is not None:
                return shape
        if self.element_shape is not None and self.element_shape.is_fully_defined():
            return tuple(self.element_shape.as_list())
        raise _fail(f"TensorArray {self.name!r}: could not read index {i}: it has not been written to, and its "
                    f"element shape {self.element_shape} is not fully defined")

    def read_many(self, indices, xp):
        with self.lock:
            values = [self.read(int(i), xp) for i in np.asarray(indices).reshape(-1)]
            if values:
                return xp.stack(values)
            if self.element_shape is None or not self.element_shape.is_fully_defined():
                raise _fail(f"TensorArray {self.name!r}: cannot stack zero elements: the element shape "
                            f"{self.element_shape} is not fully defined")
            return xp.zeros([0] + self.element_shape.as_list(), dtype=self.dtype)

    def grad(self, source):
        with self.lock:
            grad = self.grads.get(source)
            if grad is None:
                grad = self.grads[source] = TensorArrayResource(
                    f"{self.name}@{source}", self.dtype, len(self.values), False, False, self.element_shape,
                    aggregate=True, forward=self)
            return grad

    def close(self, error=None):
        self.values = [None] * len(self.values)

    def debug_string(self):
        return f"TensorArray({self.name}, size {len(self.values)})"


def _known(shape):
    return None if shape is None or shape.ndims is None else shape


@KERNELS.register("TensorArrayV3", context=True)
def _ta_create(ctx, size, *, dtype, element_shape, dynamic_size, clear_after_read, xp):
    if int(size) < 0:
        raise _fail(f"TensorArray size must be >= 0, got {int(size)}")
    handle = _step_handle(ctx, lambda: TensorArrayResource(ctx.node.name, dtype.as_numpy_dtype, int(size), dynamic_size,
                                                           clear_after_read, _known(element_shape)))
    return [handle, xp.asarray(0, dtype=xp.float32)]


@KERNELS.register("TensorArrayWriteV3")
def _ta_write(handle, index, value, flow_in, *, xp):
    handle.resource.write(int(index), value, xp)
    return flow_in


@KERNELS.register("TensorArrayReadV3")
def _ta_read(handle, index, flow_in, *, xp):
    return handle.resource.read(int(index), xp)


@KERNELS.register("TensorArrayGatherV3")
def _ta_gather(handle, indices, flow_in, *, xp):
    return handle.resource.read_many(indices, xp)


@KERNELS.register("TensorArrayScatterV3")
def _ta_scatter(handle, indices, value, flow_in, *, xp):
    indices = np.asarray(indices).reshape(-1)
    if len(indices) != value.shape[0]:
        raise _fail(f"TensorArray scatter: {len(indices)} indices but a value with {value.shape[0]} rows")
    for k, i in enumerate(indices):
        handle.resource.write(int(i), value[k], xp)
    return flow_in


@KERNELS.register("TensorArrayConcatV3")
def _ta_concat(handle, flow_in, *, xp):
    ta = handle.resource
    values = [ta.read(i, xp) for i in range(ta.size())]
    for i, v in enumerate(values):
        if v.ndim == 0:
            raise _fail(f"TensorArray {ta.name!r}: concat needs elements of rank >= 1; element {i} is a scalar")
    lengths = np.array([v.shape[0] for v in values], dtype=np.int64)
    if not values:
        raise _fail(f"TensorArray {ta.name!r}: cannot concatenate zero elements")
    return [xp.concatenate(values, axis=0), lengths]


@KERNELS.register("TensorArraySplitV3")
def _ta_split(handle, value, lengths, flow_in, *, xp):
    lengths = np.asarray(lengths).reshape(-1)
    if lengths.sum() != value.shape[0]:
        raise _fail(f"TensorArray split: lengths sum to {int(lengths.sum())}, but the value has {value.shape[0]} rows")
    ta = handle.resource
    if len(lengths) != ta.size() and not ta.dynamic_size:
        raise _fail(f"TensorArray {ta.name!r}: split into {len(lengths)} pieces, but its size is {ta.size()}")
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    for i in range(len(lengths)):
        ta.write(i, value[offsets[i]:offsets[i + 1]], xp)
    return flow_in


@KERNELS.register("TensorArraySizeV3")
def _ta_size(handle, flow_in):
    return np.int32(handle.resource.size())


@KERNELS.register("TensorArrayCloseV3")
def _ta_close(handle):
    handle.resource.close()


@KERNELS.register("TensorArrayGradV3")
def _ta_grad(handle, flow_in, *, source):
    grad = handle.resource.grad(source)
    return [ResourceHandle(handle.device, handle.container, grad.name, grad), flow_in]


# ---- Assert and Print ------------------------------------------------------------------------------------
def _text(x):
    """One value as TF prints it: bytes decoded, floats in their shortest round-tripping %g form."""
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    if isinstance(x, (float, np.floating)):
        kind = type(x) if isinstance(x, np.floating) else float
        for digits in (6, 9, 17):
            text = f"{x:.{digits}g}"
            if kind(text) == x or x != x:
                return text
    return str(x)


def _summary(value, limit):
    """TF1's SummarizeValue: the first ``limit`` values, '...' after them, brackets for inner dimensions."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return _text(arr[()])
    budget = [arr.size if limit < 0 else limit]

    def walk(a):
        parts = []
        for x in a:
            if budget[0] <= 0:
                return " ".join(parts) + "..." if a.ndim == 1 else "".join(parts) + "..."
            if a.ndim == 1:
                parts.append(_text(x))
                budget[0] -= 1
            else:
                parts.append("[" + walk(x) + "]")
        return (" " if a.ndim == 1 else "").join(parts)

    return walk(arr)


@KERNELS.register("Assert")
def _assert(condition, *data, summarize):
    if not bool(condition):
        raise _fail("assertion failed: " + " ".join(f"[{_summary(d, summarize)}]" for d in data))


@KERNELS.register_build("Print")
def _print(node):
    message, first_n, limit = node.attrs["message"], node.attrs["first_n"], node.attrs["summarize"]
    counter = itertools.count()

    def compute(x, *data):
        if first_n < 0 or next(counter) < first_n:
            sys.stderr.write(message + "".join(f"[{_summary(d, limit)}]" for d in data) + "\n")
            sys.stderr.flush()
        return x

    return compute


def _format_v2(value, limit):
    arr = np.asarray(value)
    if arr.dtype == object:
        arr = np.vectorize(_text, otypes=[object])(arr) if arr.size else arr
        if arr.ndim == 0:
            return arr.item()
    if arr.ndim == 0:
        return str(arr.item())
    threshold = sys.maxsize if limit < 0 else 2 * limit
    return np.array2string(arr, threshold=threshold, edgeitems=max(limit, 1), separator=" ",
                           formatter={"object": str} if arr.dtype == object else None)


@KERNELS.register_build("PrintV2")
def _print_v2(node):
    template, stream, limit, end = (node.attrs[k] for k in ("template", "output_stream", "summarize", "end"))

    def compute(*inputs):
        text = template.format(*(_format_v2(x, limit) for x in inputs))
        if stream == "stdout":
            sys.stdout.write(text + end)
        elif stream == "stderr":
            sys.stderr.write(text + end)
        elif stream.startswith("file://"):
            with open(stream[len("file://"):], "a", encoding="utf-8") as f:
                f.write(text + end)
        else:
            level = stream[len("log("):-1]
            logging.getLogger("tensorflow").log(logging.getLevelName(level.upper()), text)

    return compute
