"""CPU kernels for the fused optimizer updates (ResourceApply*, ResourceSparseApply*).

Each update is written once, in place, over whole arrays, with TF's formulas; scalars arrive as 0-d
arrays of the variable's dtype. A sparse update of a row-local optimizer runs the same formula on the
gathered rows (duplicate rows summed first) and writes them back, so only those rows change. With
``use_locking`` the variable and its slots stay locked for the whole update; either way an array that
a reader still holds is copied before it is changed (see kernels/state.py).
"""

import numpy as np

from tensorweave.extension import SLOTS, UPDATES, KernelSet, errors, sparse_inputs

from tensorweave_cpu.kernels.state import check_indices, owned_value, variable_of

KERNELS = KernelSet("CPU")


# ---- the update formulas (TF's training_ops.cc), over whole arrays -----------------------------------
def gradient_descent(var, alpha, delta):
    var -= alpha * delta


def momentum(var, accum, lr, grad, momentum, use_nesterov=False):
    accum *= momentum
    accum += grad
    if use_nesterov:
        step = accum * momentum
        step += grad
        step *= lr
    else:
        step = accum * lr
    var -= step


def adagrad(var, accum, lr, grad, update_slots=True):
    if update_slots:
        accum += grad * grad
    step = np.sqrt(accum)
    np.divide(grad, step, out=step)
    step *= lr
    var -= step


def adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
    alpha = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    step = grad - m
    step *= 1 - beta1
    m += step
    np.multiply(grad, grad, out=step)
    step -= v
    step *= 1 - beta2
    v += step
    _adam_step(var, m, v, alpha, epsilon, step)


def _adam_step(var, m, v, alpha, epsilon, scratch):
    """var -= alpha * m / (sqrt(v) + epsilon), with ``scratch`` as the one temporary."""
    np.sqrt(v, out=scratch)
    scratch += epsilon
    np.divide(m, scratch, out=scratch)
    scratch *= alpha
    var -= scratch


def rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad):
    step = grad * grad
    step -= ms
    step *= 1 - rho
    ms += step
    np.add(ms, epsilon, out=step)
    _momentum_step(var, mom, lr, momentum, grad, step)


def centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
    step = grad * grad
    step -= ms
    step *= 1 - rho
    ms += step
    np.subtract(grad, mg, out=step)
    step *= 1 - rho
    mg += step
    np.multiply(mg, mg, out=step)
    np.subtract(ms, step, out=step)
    step += epsilon
    _momentum_step(var, mom, lr, momentum, grad, step)


def _momentum_step(var, mom, lr, momentum, grad, denominator):
    """mom = mom * momentum + lr * grad / sqrt(denominator); var -= mom (``denominator`` is overwritten)."""
    np.sqrt(denominator, out=denominator)
    np.divide(grad, denominator, out=denominator)
    denominator *= lr
    mom *= momentum
    mom += denominator
    var -= mom


def adadelta(var, accum, accum_update, lr, rho, epsilon, grad):
    accum *= rho
    accum += grad * grad * (1 - rho)
    update = np.sqrt(accum_update + epsilon) / np.sqrt(accum + epsilon) * grad
    accum_update *= rho
    accum_update += update * update * (1 - rho)
    update *= lr
    var -= update


def ftrl(var, accum, linear, grad, lr, l1, l2, lr_power):
    ftrl_v2(var, accum, linear, grad, lr, l1, l2, None, lr_power)


def ftrl_v2(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power):
    """FTRL-proximal; V2's shrinkage adds 2 * l2_shrinkage * var to the gradient of the linear term only."""
    shrunk = grad if l2_shrinkage is None else grad + 2 * l2_shrinkage * var
    new_accum = accum + grad * grad
    if lr_power == -0.5:
        new_power, old_power = np.sqrt(new_accum), np.sqrt(accum)
    else:
        new_power, old_power = new_accum ** -lr_power, accum ** -lr_power
    linear += shrunk - (new_power - old_power) / lr * var
    quadratic = new_power / lr + 2 * l2
    var[...] = np.where(np.abs(linear) > l1, (l1 * np.sign(linear) - linear) / quadratic, 0)
    accum[...] = new_accum


def _proximal_step(var, prox_var, rate, l1, l2):
    """var = prox(prox_var): soft-threshold by rate * l1 (when l1 > 0), then shrink by 1 + rate * l2."""
    if l1 > 0:
        prox_var = np.sign(prox_var) * np.maximum(np.abs(prox_var) - rate * l1, 0)
    var[...] = prox_var / (1 + l2 * rate)


def proximal_adagrad(var, accum, lr, l1, l2, grad):
    accum += grad * grad
    rate = lr / np.sqrt(accum)
    _proximal_step(var, var - grad * rate, rate, l1, l2)


def proximal_gradient_descent(var, alpha, l1, l2, delta):
    _proximal_step(var, var - alpha * delta, alpha, l1, l2)


def adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2, global_step):
    """Dual averaging: var from the sums of gradients and squared gradients and the step count."""
    gradient_accumulator += grad
    gradient_squared_accumulator += grad * grad
    step = global_step.astype(var.dtype)
    denominator = l2 * step * lr + np.sqrt(gradient_squared_accumulator)
    if l1 > 0:
        numerator = -np.sign(gradient_accumulator) * np.maximum(np.abs(gradient_accumulator) - step * l1, 0)
    else:
        numerator = -gradient_accumulator
    var[...] = lr * numerator / denominator


DENSE = {"GradientDescent": gradient_descent, "Momentum": momentum, "Adagrad": adagrad, "Adam": adam,
         "RMSProp": rms_prop, "CenteredRMSProp": centered_rms_prop, "Adadelta": adadelta, "Ftrl": ftrl,
         "FtrlV2": ftrl_v2, "ProximalAdagrad": proximal_adagrad,
         "ProximalGradientDescent": proximal_gradient_descent, "AdagradDA": adagrad_da}


def sparse_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, indices):
    """TF1's AdamOptimizer on IndexedSlices: every row's moments decay, the given rows get the gradient."""
    alpha = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m *= beta1
    m[indices] += grad * (1 - beta1)
    v *= beta2
    v[indices] += grad * grad * (1 - beta2)
    _adam_step(var, m, v, alpha, epsilon, np.empty_like(var))


# ---- kernels ----------------------------------------------------------------------------------------
def summed_rows(indices, grad, var_shape, xp=np, check_ids=check_indices, add_at=np.add.at):
    """Unique row ids and their summed gradient rows [ids, *var_shape[1:]] (the ids as given when none repeats).

    Written once for every device: a GPU package passes its array module, its id check (same message) and its
    unbuffered row add, called as ``ufunc.at(target, rows, updates)``.
    """
    indices = indices.reshape(-1)
    if grad.size != indices.size * int(np.prod(var_shape[1:], dtype=np.int64)):
        raise errors.InvalidArgumentError(None, None, (
            f"sparse update of a variable of shape {list(var_shape)}: {indices.size} row ids but gradient rows of "
            f"shape {list(grad.shape)}"))
    grad = grad.reshape((indices.size,) + tuple(var_shape[1:]))
    check_ids(indices, var_shape[0], "sparse optimizer update")
    unique, inverse = xp.unique(indices, return_inverse=True)
    if unique.size == indices.size:
        return indices, grad
    summed = xp.zeros((unique.size,) + grad.shape[1:], dtype=grad.dtype)
    add_at(summed, inverse.reshape(-1), grad)
    return unique, summed


def check_update_shapes(names, arrays, grad, sparse):
    """Refuses slots (named ``names[1:]``) or a dense gradient whose shape is not the variable's, on any device."""
    var = arrays[0]
    for name, slot in zip(names[1:], arrays[1:]):
        if slot.shape != var.shape:
            raise errors.InvalidArgumentError(None, None, (
                f"var and {name} do not have the same shape: {list(var.shape)} {list(slot.shape)}"))
    if sparse:
        if var.ndim == 0:
            raise errors.InvalidArgumentError(None, None, "a sparse update needs a variable of rank 1 or more")
    elif grad.shape != var.shape:
        raise errors.InvalidArgumentError(None, None, (
            f"var and grad do not have the same shape: {list(var.shape)} {list(grad.shape)}"))


class locked:  # noqa: N801 - used as a context manager, like a lock
    """Holds the locks of several variables (when ``locking``), taken in one global order so two updates
    cannot deadlock."""

    def __init__(self, variables, locking=True):
        self.locks = [v.lock for v in sorted(variables, key=id)] if locking else []

    def __enter__(self):
        for lock in self.locks:
            lock.acquire()

    def __exit__(self, *exc):
        for lock in reversed(self.locks):
            lock.release()



def update_inputs(optimizer, sparse):
    """(names of the handle inputs, index of grad or delta among the other inputs) of an update op; the numpy
    and the native kernels read their inputs alike."""
    names = sparse_inputs(UPDATES[optimizer][0]) if sparse else UPDATES[optimizer][0]
    handles = [n for n in names if n in SLOTS]
    return handles, names.index("grad" if "grad" in names else "delta") - len(handles)


def update_attrs(node):
    """(dtype, use_locking, the formula's keyword options) of an update node."""
    options = {k: node.attrs[k] for k in ("use_nesterov", "update_slots") if k in node.attrs}
    return node.attrs["T"], node.attrs["use_locking"], options


def _kernel(optimizer, sparse):
    handles, grad_at = update_inputs(optimizer, sparse)
    n_handles = len(handles)
    dense_update = DENSE[optimizer]

    def build(node):
        dtype, locking, options = update_attrs(node)

        def compute(*inputs):
            variables = [variable_of(h, dtype) for h in inputs[:n_handles]]
            rest = list(inputs[n_handles:])
            with locked(variables, locking):
                arrays = [owned_value(v) for v in variables]
                check_update_shapes(handles, arrays, rest[grad_at], sparse)
                if not sparse:
                    dense_update(*arrays, *rest, **options)
                    return
                indices, grad = summed_rows(rest.pop(grad_at + 1), rest[grad_at], arrays[0].shape)
                if optimizer == "Adam":
                    sparse_adam(*arrays, *rest[:grad_at], grad, indices)
                    return
                rest[grad_at] = grad
                rows = [a[indices] for a in arrays]
                dense_update(*rows, *rest, **options)
                for array, row in zip(arrays, rows):
                    array[indices] = row
        return compute
    return build


for _optimizer in UPDATES:
    for _sparse in (False, True):
        KERNELS.add(f"Resource{'Sparse' if _sparse else ''}Apply{_optimizer}", build=_kernel(_optimizer, _sparse))
