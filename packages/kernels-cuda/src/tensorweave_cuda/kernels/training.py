"""GPU kernels for the fused optimizer updates (ResourceApply*, ResourceSparseApply*).

Each dense update is one ElementwiseKernel that reads the gradient and slots once and writes them once
(numpy needs a temporary per step); float16 is computed in float32. A sparse update sums duplicate rows
(unique + the atomic scatter), then runs the same formula, written once below, over the given rows only, as
an ElementwiseKernel indexing the slots raw. Sparse Adam decays every row's moments, as TF1's does.
Locking, copy-on-write, the checks and the summing of duplicate rows are the CPU kernels' own functions.
"""

import functools

import numpy as np

from tensorweave.extension import SLOTS, UPDATES, KernelSet, sparse_inputs

from tensorweave_cpu.kernels.state import owned_value, variable_of
from tensorweave_cpu.kernels.training import check_update_shapes, locked, summed_rows
from tensorweave_cuda.kernels import compile as cc
from tensorweave_cuda.kernels.checks import check_rows
from tensorweave_cuda.kernels.scatter import scatter_add_into

KERNELS = KernelSet("GPU", priority=10)

# FTRL-proximal on one element (TF's ApplyFtrl[V2]): V2's shrinkage enters the linear term only.
FTRL = """
        A g = (A)grad;
        A v = (A)var;
        A shrunk = {shrunk};
        A old_accum = (A)accum;
        A new_accum = old_accum + g * g;
        A new_power = (A)lr_power == (A)-0.5 ? sqrt(new_accum) : pow(new_accum, -(A)lr_power);
        A old_power = (A)lr_power == (A)-0.5 ? sqrt(old_accum) : pow(old_accum, -(A)lr_power);
        A lin = (A)(T)((A)linear + shrunk - (new_power - old_power) / (A)lr * v);
        linear = (T)lin;
        A sign = (A)((lin > (A)0) - (lin < (A)0));
        var = (T)(fabs(lin) > (A)l1 ? ((A)l1 * sign - lin) / (new_power / (A)lr + (A)2 * (A)l2) : (A)0);
        accum = (T)new_accum;"""
# The proximal operator after a step to ``prox`` of size ``rate``: soft-threshold by rate * l1, shrink by l2.
PROXIMAL_STEP = """
        A prox_sign = (A)((prox > (A)0) - (prox < (A)0));
        A kept = (A)l1 > (A)0 ? prox_sign * fmax(fabs(prox) - rate * (A)l1, (A)0) : prox;
        var = (T)(kept / ((A)1 + (A)l2 * rate));"""

# The formulas (TF's training_ops.cc) on one element; A is the compute type (float for float16).
FORMULAS = {
    "GradientDescent": "var = (T)((A)var - (A)alpha * (A)delta);",
    "Momentum": """
        A a = (A)accum * (A)momentum + (A)grad;
        accum = (T)a;
        A step = use_nesterov ? ((A)(T)a * (A)momentum + (A)grad) * (A)lr : (A)(T)a * (A)lr;
        var = (T)((A)var - step);""",
    "Adagrad": """
        A a = (A)accum;
        if (update_slots) { a += (A)grad * (A)grad; accum = (T)a; }
        var = (T)((A)var - (A)lr * (A)grad / sqrt((A)(T)a));""",
    "Adam": """
        A alpha = (A)lr * sqrt((A)1 - (A)beta2_power) / ((A)1 - (A)beta1_power);
        A g = (A)grad;
        A m1 = (A)m + (g - (A)m) * ((A)1 - (A)beta1);
        A v1 = (A)v + (g * g - (A)v) * ((A)1 - (A)beta2);
        m = (T)m1; v = (T)v1;
        var = (T)((A)var - alpha * (A)(T)m1 / (sqrt((A)(T)v1) + (A)epsilon));""",
    "RMSProp": """
        A g = (A)grad;
        A ms1 = (A)ms + (g * g - (A)ms) * ((A)1 - (A)rho);
        ms = (T)ms1;
        A mom1 = (A)mom * (A)momentum + (A)lr * g / sqrt((A)(T)ms1 + (A)epsilon);
        mom = (T)mom1;
        var = (T)((A)var - (A)(T)mom1);""",
    "CenteredRMSProp": """
        A g = (A)grad;
        A ms1 = (A)ms + (g * g - (A)ms) * ((A)1 - (A)rho);
        A mg1 = (A)mg + (g - (A)mg) * ((A)1 - (A)rho);
        ms = (T)ms1; mg = (T)mg1;
        A denominator = (A)(T)ms1 - (A)(T)mg1 * (A)(T)mg1 + (A)epsilon;
        A mom1 = (A)mom * (A)momentum + (A)lr * g / sqrt(denominator);
        mom = (T)mom1;
        var = (T)((A)var - (A)(T)mom1);""",
    "Adadelta": """
        A g = (A)grad;
        A a = (A)accum * (A)rho + g * g * ((A)1 - (A)rho);
        accum = (T)a;
        A update = sqrt((A)accum_update + (A)epsilon) / sqrt((A)(T)a + (A)epsilon) * g;
        accum_update = (T)((A)accum_update * (A)rho + update * update * ((A)1 - (A)rho));
        var = (T)((A)var - update * (A)lr);""",
    "Ftrl": FTRL.format(shrunk="g"),
    "FtrlV2": FTRL.format(shrunk="g + (A)2 * (A)l2_shrinkage * v"),
    "ProximalAdagrad": """
        A g = (A)grad;
        A a = (A)accum + g * g;
        accum = (T)a;
        A rate = (A)lr / sqrt((A)(T)a);
        A prox = (A)var - g * rate;""" + PROXIMAL_STEP,
    "ProximalGradientDescent": """
        A rate = (A)alpha;
        A prox = (A)var - rate * (A)grad;""" + PROXIMAL_STEP,
    "AdagradDA": """
        A g = (A)grad;
        A ga = (A)gradient_accumulator + g;
        A gg = (A)gradient_squared_accumulator + g * g;
        gradient_accumulator = (T)ga;
        gradient_squared_accumulator = (T)gg;
        A acc = (A)(T)ga;
        A step = (A)global_step;
        A sign = (A)((acc > (A)0) - (acc < (A)0));
        A numerator = (A)l1 > (A)0 ? -sign * fmax(fabs(acc) - step * (A)l1, (A)0) : -acc;
        var = (T)((A)lr * numerator / ((A)l2 * step * (A)lr + sqrt((A)(T)gg)));""",
}
OPTIONS = {"Momentum": ("use_nesterov",), "Adagrad": ("update_slots",)}

# Sparse Adam's own steps: the given rows' moments get the gradient after every row decayed.
ADAM_ROWS = "m = (T)((A)m + (A)grad * ((A)1 - (A)beta1)); v = (T)((A)v + (A)grad * (A)grad * ((A)1 - (A)beta2));"
ADAM_STEP = """
        A alpha = (A)lr * sqrt((A)1 - (A)beta2_power) / ((A)1 - (A)beta1_power);
        var = (T)((A)var - alpha * (A)m / (sqrt((A)v) + (A)epsilon));"""

PREAMBLE = """
template <typename T> struct tw_acc { typedef T type; };
template <> struct tw_acc<float16> { typedef float type; };
"""


def parameters(optimizer):
    """(slots, scalars, options) of an optimizer's dense update, in the op's input order."""
    names = UPDATES[optimizer][0]
    slots = [n for n in names if n in SLOTS]
    scalars = [n for n in names if n not in SLOTS and n not in ("grad", "delta")]
    return slots, scalars, OPTIONS.get(optimizer, ())


def dense_params(slots, inputs, options, body):
    """ElementwiseKernel (in_params, out_params, operation) for ``body`` over whole slots."""
    in_params = ", ".join([f"T {n}" for n in inputs] + [f"int32 {o}" for o in options])
    out_params = ", ".join(f"T {s}" for s in slots)
    return in_params, out_params, "typedef typename tw_acc<T>::type A;\n" + body


def sparse_params(slots, inputs, options, body):
    """The same over the rows named by ``rows``: the slots are raw, each element found from its row id."""
    in_params = ", ".join([f"T {n}" for n in inputs] + ["raw I rows", "int64 inner"] + [f"int32 {o}" for o in options])
    out_params = ", ".join(f"raw T {s}_all" for s in slots)
    locate = "long long at = (long long)rows[i / inner] * inner + i % inner;\n" + "".join(
        f"T& {s} = {s}_all[at];\n" for s in slots)
    return in_params, out_params, "typedef typename tw_acc<T>::type A;\n" + locate + body


@functools.lru_cache(maxsize=None)
def elementwise(name, in_params, out_params, operation):
    import cupy
    return cupy.ElementwiseKernel(in_params, out_params, operation, f"tensorweave_{name}", preamble=PREAMBLE)


def _dense_kernel(optimizer, sparse):
    slots, scalars, options = parameters(optimizer)
    grad_name = "delta" if optimizer == "GradientDescent" else "grad"
    build_params = sparse_params if sparse else dense_params
    return f"{optimizer}{'_rows' if sparse else ''}", build_params(slots, scalars + [grad_name], options,
                                                                  FORMULAS[optimizer])


def add_rows(target, rows, updates):
    """``add.at(target, rows, updates)`` for summing gradient rows, with the atomic scatter."""
    inner = target.size // target.shape[0]
    scatter_add_into(target, updates.reshape(rows.size, inner), rows, rows.size, inner)


def _kernel(optimizer, sparse):
    slots, scalars, options = parameters(optimizer)
    names = sparse_inputs(UPDATES[optimizer][0]) if sparse else UPDATES[optimizer][0]
    grad_at = names.index("grad" if "grad" in names else "delta") - len(slots)
    kernel_name, params = _dense_kernel(optimizer, sparse)

    def build(node):
        dtype = node.attrs["T"]
        locking = node.attrs["use_locking"]
        flags = [np.int32(bool(node.attrs[o])) for o in options]
        xp = node.device.array_module

        def compute(*inputs):
            variables = [variable_of(h, dtype) for h in inputs[:len(slots)]]
            rest = list(inputs[len(slots):])
            indices = rest.pop(grad_at + 1) if sparse else None
            grad = rest.pop(grad_at)
            values = [xp.asarray(v, dtype=dtype.as_numpy_dtype) for v in rest]  # the scalars, in order
            with locked(variables, locking):
                arrays = [owned_value(v) for v in variables]
                check_update_shapes(slots, arrays, grad, sparse)
                for v, array in zip(variables, arrays):
                    if not array.flags.c_contiguous:
                        v.value = xp.ascontiguousarray(array)
                arrays = [v.value for v in variables]
                if not sparse:
                    elementwise(kernel_name, *params)(*values, grad, *flags, *arrays)
                    return
                rows, summed = summed_rows(indices, grad, arrays[0].shape, xp, check_rows, add_rows)
                inner = np.int64(np.prod(arrays[0].shape[1:], dtype=np.int64))
                if optimizer == "Adam":
                    _sparse_adam(arrays, dict(zip(scalars, values)), summed, rows, inner)
                    return
                elementwise(kernel_name, *params)(*values, summed, rows, inner, *flags, *arrays)
        return compute
    return build


def _sparse_adam(arrays, scalars, summed, rows, inner):
    var, m, v = arrays
    m *= scalars["beta1"]
    v *= scalars["beta2"]
    rows_kernel = elementwise("Adam_moment_rows", *sparse_params(["m", "v"], ["beta1", "beta2", "grad"], (),
                                                                 ADAM_ROWS))
    rows_kernel(scalars["beta1"], scalars["beta2"], summed, rows, inner, m, v)
    step = elementwise("Adam_step", *dense_params(["var"], ["m", "v", "beta1_power", "beta2_power", "lr",
                                                            "epsilon"], (), ADAM_STEP))
    step(m, v, scalars["beta1_power"], scalars["beta2_power"], scalars["lr"], scalars["epsilon"], var)


for _optimizer in FORMULAS:
    for _sparse in (False, True):
        KERNELS.add(f"Resource{'Sparse' if _sparse else ''}Apply{_optimizer}", build=_kernel(_optimizer, _sparse),
                    dtypes=list(cc.FLOATS))
