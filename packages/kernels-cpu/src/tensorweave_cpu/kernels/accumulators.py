"""CPU kernels for gradient accumulators (``tf.ConditionalAccumulator``, ``tf.SparseConditionalAccumulator``).

An accumulator is a resource found or made as a queue is (``shared_name`` or private to the session). A
take that needs more gradients waits in the accumulator's list, not on an executor thread, and is
completed by the apply that brings the count up, or failed when its step is cancelled or the
accumulator is destroyed (its session closed, its container reset).
"""

import collections
import threading

import numpy as np

from tensorweave.extension import KernelSet, Resource, errors

from tensorweave_cpu.shared_resources import find_or_make

KERNELS = KernelSet("CPU")


def _shape_str(shape):
    return "<unknown>" if shape is None else "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _compatible(want, got):
    return want is None or (len(want) == len(got) and all(w is None or w == g for w, g in zip(want, got)))


class _Take:
    __slots__ = ("num_required", "done", "cancellation", "token")

    def __init__(self, num_required, done, cancellation):
        self.num_required = num_required
        self.done = done
        self.cancellation = cancellation
        self.token = None


class Accumulator(Resource):
    """Sums dense gradients at or after its global step; hands out their mean (or sum) to waiting takes."""

    kind = "ConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.shape = shape
        self.reduction_type = reduction_type
        self._lock = threading.Lock()
        self._takers = collections.deque()
        self._closed = None
        self._global_step = 0
        self._count = 0
        self._reset()

    def signature(self):
        return (self.kind, self.dtype.name, self.shape, self.reduction_type)

    def debug_string(self):
        return f"{self.kind} '{self.name}' ({self._count} gradients, global step {self._global_step})"

    # ---- the state, overridden by the sparse kind ------------------------------------------------
    def _reset(self):
        self._sum = None

    def _check(self, gradient):
        shape = gradient.shape
        if not _compatible(self.shape, shape) or (self._sum is not None and self._sum.shape != shape):
            have = _shape_str(self.shape) if self._sum is None else list(self._sum.shape)
            raise errors.InvalidArgumentError(None, None, (
                f"{self.kind} '{self.name}' holds gradients of shape {have}, but was applied one of shape "
                f"{list(shape)}; apply gradients of the accumulator's shape"))

    def _add(self, gradient):
        if self._sum is None:
            self._sum = np.array(gradient, dtype=self.dtype, copy=True)
        else:
            self._sum += gradient

    def _result(self):
        if self.reduction_type == "MEAN":
            return (self._sum / self._count).astype(self.dtype, copy=False)
        return self._sum

    # ---- the operations -----------------------------------------------------------------------------
    def num_accumulated(self):
        with self._lock:
            return self._count

    def set_global_step(self, step):
        with self._lock:
            self._global_step = int(step)

    def apply(self, local_step, *gradient):
        """Adds the gradient unless ``local_step`` is older than the global step; may complete a take."""
        reports = []
        with self._lock:
            self._check(*gradient)
            if int(local_step) < self._global_step:
                return  # stale: computed from variables an applied step has since changed
            self._add(*gradient)
            self._count += 1
            self._flush(reports)
        _report(reports)

    def take(self, num_required, cancellation, done):
        num_required = int(num_required)
        if num_required < 1:
            raise errors.InvalidArgumentError(None, None, (
                f"take_grad from {self.kind} '{self.name}': num_required must be >= 1, got {num_required}"))
        attempt = _Take(num_required, done, cancellation)
        reports = []
        with self._lock:
            if self._closed is not None:
                reports.append((attempt, self._closed))
            else:
                self._takers.append(attempt)
                self._flush(reports)
                if cancellation is not None and not any(a is attempt for a, _ in reports):
                    attempt.token = cancellation.register(lambda err, a=attempt: self._cancel(a, err))
                    if attempt.token is None:
                        self._takers.remove(attempt)
                        reports.append((attempt, cancellation.error))
        _report(reports)

    def close(self, error=None):
        """The container was cleared or its session closed: waiting takes fail instead of hanging."""
        error = error or errors.CancelledError(None, None, (
            f"{self.kind} '{self.name}' was destroyed (its session closed or its container was reset) while "
            f"this step waited in take_grad"))
        with self._lock:
            self._closed = error
            reports = [(attempt, error) for attempt in self._takers]
            self._takers.clear()
        _report(reports)

    def _cancel(self, attempt, error):
        with self._lock:
            if attempt not in self._takers:
                return
            self._takers.remove(attempt)
        _report([(attempt, error)])

    def _flush(self, reports):
        """Hands the accumulated gradient to the first waiting take once it has enough."""
        if self._takers and self._count >= self._takers[0].num_required:
            attempt = self._takers.popleft()
            try:
                result = self._result()
            except errors.OpError as e:
                result = e
            self._reset()
            self._count = 0
            self._global_step += 1
            reports.append((attempt, result))


class SparseAccumulator(Accumulator):
    """Keeps the applied rows; a take sums each index's rows once, sorted by index."""

    kind = "SparseConditionalAccumulator"

    def _reset(self):
        self._indices, self._values, self._dense_shape = [], [], None

    def _check(self, indices, values, dense_shape):
        where = f"{self.kind} '{self.name}'"
        if indices.ndim != 1 or values.ndim < 1 or values.shape[0] != indices.shape[0]:
            raise errors.InvalidArgumentError(None, None, (
                f"{where}: a sparse gradient needs indices of shape [k] and values of shape [k, ...], got "
                f"indices {list(indices.shape)} and values {list(values.shape)}"))
        rows = None if self.shape is None else self.shape[1:]
        have = self._values[0].shape[1:] if self._values else None
        if not _compatible(rows, values.shape[1:]) or (have is not None and have != values.shape[1:]):
            raise errors.InvalidArgumentError(None, None, (
                f"{where} holds gradients of shape {_shape_str(self.shape)} (rows {list(have or ())}), but was "
                f"applied rows of shape {list(values.shape[1:])}; apply rows of the accumulator's shape"))
        if dense_shape is not None:
            dense_shape = tuple(int(d) for d in dense_shape)
            if (not _compatible(self.shape, dense_shape) or dense_shape[1:] != values.shape[1:]
                    or (self._dense_shape is not None and self._dense_shape != dense_shape)):
                raise errors.InvalidArgumentError(None, None, (
                    f"{where} holds gradients of shape {_shape_str(self._dense_shape or self.shape)}, but was "
                    f"applied one of shape {list(dense_shape)} (values {list(values.shape)}); apply gradients of "
                    f"the accumulator's shape"))
        limit = (dense_shape or self._dense_shape or self.shape or (None,))[0]
        if indices.size and (indices.min() < 0 or (limit is not None and indices.max() >= limit)):
            raise errors.InvalidArgumentError(None, None, (
                f"{where}: gradient indices must lie in [0, {limit if limit is not None else 'inf'}), got "
                f"{int(indices.min())}..{int(indices.max())}"))

    def _add(self, indices, values, dense_shape):
        self._indices.append(np.array(indices, dtype=np.int64, copy=True))
        self._values.append(np.array(values, dtype=self.dtype, copy=True))
        if dense_shape is not None:
            self._dense_shape = tuple(int(d) for d in dense_shape)

    def _result(self):
        all_indices = np.concatenate(self._indices)
        unique, where = np.unique(all_indices, return_inverse=True)
        values = np.zeros((unique.size,) + self._values[0].shape[1:], self.dtype)
        np.add.at(values, where.reshape(-1), np.concatenate(self._values))
        if self.reduction_type == "MEAN":
            values = (values / self._count).astype(self.dtype, copy=False)
        return [unique, values, np.array(self._output_shape(unique), np.int64)]

    def _output_shape(self, unique):
        if self._dense_shape is not None:
            return self._dense_shape
        rows = self._values[0].shape[1:]
        first = self.shape[0] if self.shape is not None and self.shape[0] is not None else (
            int(unique[-1]) + 1 if unique.size else 0)
        return (first,) + rows


def _report(reports):
    """Completes takes outside the accumulator's lock (a callback may run more of the step)."""
    for attempt, result in reports:
        if attempt.token is not None:
            attempt.cancellation.deregister(attempt.token)
        attempt.done(result)


# ---- kernels ------------------------------------------------------------------------------------------------
def _creator(cls):
    def build(node):
        attrs = node.attrs
        shape = attrs["shape"]
        shape = None if shape.ndims is None else tuple(d.value for d in shape.dims)
        dtype = attrs["dtype"].as_numpy_dtype
        wanted = cls("", dtype, shape, attrs.get("reduction_type", "MEAN")).signature()

        def create(ctx):
            handle = find_or_make(ctx, node, lambda name: cls(name, dtype, shape, wanted[3]))
            accumulator = handle.resource
            have = getattr(accumulator, "signature", lambda: type(accumulator).__name__)()
            if have != wanted:
                raise errors.InvalidArgumentError(None, None, (
                    f"shared accumulator '{handle.name}' in container '{handle.container}' is {have}, but this "
                    f"op asks for {wanted}; give accumulators that differ different shared_names"))
            return handle

        return create
    return build


KERNELS.add("ConditionalAccumulator", build=_creator(Accumulator), context=True)
KERNELS.add("SparseConditionalAccumulator", build=_creator(SparseAccumulator), context=True)


def _accumulator(handle, cls=None):
    """The accumulator behind ``handle``; ``cls``, when given, is the exact kind the op works on."""
    accumulator = getattr(handle, "resource", None)
    if not isinstance(accumulator, Accumulator):
        raise errors.InvalidArgumentError(None, None, f"expected an accumulator handle, got {handle!r}")
    if cls is not None and type(accumulator) is not cls:
        raise errors.InvalidArgumentError(None, None, (
            f"{accumulator.kind} '{accumulator.name}' was given to an op for a {cls.kind}; use the methods of "
            f"the accumulator's own class (apply_grad/take_grad of tf.{accumulator.kind})"))
    return accumulator


@KERNELS.register("AccumulatorNumAccumulated")
def _num_accumulated(handle):
    return np.int32(_accumulator(handle).num_accumulated())


@KERNELS.register("AccumulatorSetGlobalStep")
def _set_global_step(handle, new_global_step):
    _accumulator(handle).set_global_step(new_global_step)


@KERNELS.register("AccumulatorApplyGradient")
def _apply(handle, local_step, gradient):
    _accumulator(handle, Accumulator).apply(local_step, np.asarray(gradient))


@KERNELS.register("AccumulatorTakeGradient", asynchronous=True)
def _take(ctx, done, handle, num_required):
    _accumulator(handle, Accumulator).take(num_required, ctx.step.cancellation, done)


@KERNELS.register("SparseAccumulatorApplyGradient")
def _sparse_apply(handle, local_step, indices, values, dense_shape, *, has_known_shape):
    _accumulator(handle, SparseAccumulator).apply(local_step, np.asarray(indices), np.asarray(values),
                                                  np.asarray(dense_shape) if has_known_shape else None)


@KERNELS.register("SparseAccumulatorTakeGradient", asynchronous=True)
def _sparse_take(ctx, done, handle, num_required):
    _accumulator(handle, SparseAccumulator).take(num_required, ctx.step.cancellation, done)
