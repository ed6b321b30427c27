"""Native CPU kernels against their numpy twins, one op at a time, at the sizes of the training benchmarks.

Both kernels are built from their registrations with the same attrs and run on the same inputs; the
"numpy" row is the kernel the registry falls back to without the extension.
"""

import importlib
from types import SimpleNamespace

import numpy as np

from benchmarks.common import Benchmark, Case

F32 = np.float32


def _node(attrs):
    dtype = attrs.get("T", attrs.get("dtype"))
    return SimpleNamespace(op_type="", name="bench", attrs=attrs, input_dtypes=[dtype] * 4,
                           device=SimpleNamespace(array_module=np))


def _pair(op_type, attrs):
    """(native compute, numpy compute) for op_type, or None without the extension."""
    from tensorweave_cpu.kernels import native
    from tensorweave_cpu.plugin import KERNEL_MODULES

    if native.native is None:
        return None
    mine = [k for k in native.KERNELS if k.op_type == op_type and k.matches(attrs)]
    twins = [k for name in KERNEL_MODULES if name != native.__name__
             for k in importlib.import_module(name).KERNELS if k.op_type == op_type and k.matches(attrs)]
    return mine[0].build(_node(attrs)), twins[0].build(_node(attrs))


def _variable(array):
    import tensorweave as tf
    from tensorweave.extension import ResourceHandle
    from tensorweave_cpu.kernels.state import Var

    var = Var("bench", tf.as_dtype(array.dtype))
    var.value = array.copy()
    return ResourceHandle("/cpu:0", "", "bench", var)


def _cases(rng):
    """(name, op_type, attrs, make_inputs) at the sizes the CNN, MLP and embedding steps use."""
    import tensorweave as tf

    def arr(*shape):
        return rng.standard_normal(shape).astype(F32)

    conv = dict(T=tf.float32, strides=[1] * 4, padding="SAME", data_format="NHWC", dilations=[1] * 4)
    pool = dict(T=tf.float32, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME", data_format="NHWC")
    x1, w1, dy1 = arr(32, 28, 28, 1), arr(5, 5, 1, 32), arr(32, 28, 28, 32)
    x2, w2, dy2 = arr(32, 14, 14, 32), arr(5, 5, 32, 64), arr(32, 14, 14, 64)
    c1 = np.maximum(arr(32, 28, 28, 32), 0)
    pooled = c1.reshape(32, 14, 2, 14, 2, 32).max(axis=(2, 4))
    logits, labels = arr(512, 10), rng.integers(0, 10, 512).astype(np.int32)
    table, ids, rows = arr(100_000, 64), rng.integers(0, 100_000, 1024).astype(np.int32), arr(1024, 64)
    gd = dict(T=tf.float32, use_locking=False, Tindices=tf.int32)
    adam_scalars = [np.asarray(v, F32) for v in (0.9, 0.999, 0.001, 0.9, 0.999, 1e-8)]
    return [
        ("Conv2D 32x28x28x1*5x5x32", "Conv2D", conv, lambda: (x1, w1)),
        ("Conv2DBackpropFilter (same)", "Conv2DBackpropFilter", conv, lambda: (x1, np.array(w1.shape), dy1)),
        ("Conv2D 32x14x14x32*5x5x64", "Conv2D", conv, lambda: (x2, w2)),
        ("Conv2DBackpropInput same", "Conv2DBackpropInput", conv, lambda: (np.array(x2.shape), w2, dy2)),
        ("Conv2DBackpropFilter same", "Conv2DBackpropFilter", conv, lambda: (x2, np.array(w2.shape), dy2)),
        ("MaxPool 32x28x28x32 2x2", "MaxPool", pool, lambda: (c1,)),
        ("MaxPoolGrad (same)", "MaxPoolGrad", pool, lambda: (c1, pooled, pooled)),
        ("ReluGrad 32x28x28x32", "ReluGrad", dict(T=tf.float32), lambda: (c1, c1)),
        ("BiasAdd 32x28x28x32", "BiasAdd", dict(T=tf.float32, data_format="NHWC"), lambda: (c1, arr(32))),
        ("BiasAddGrad (same)", "BiasAddGrad", dict(T=tf.float32, data_format="NHWC"), lambda: (c1,)),
        ("Sigmoid 32x512", "Sigmoid", dict(T=tf.float32), lambda: (arr(32, 512),)),
        ("SparseXent 512x10", "SparseSoftmaxCrossEntropyWithLogits",
         dict(T=tf.float32, Tlabels=tf.int32), lambda: (logits, labels)),
        ("ApplyGD 784x256", "ResourceApplyGradientDescent", gd,
         lambda: (_variable(arr(784, 256)), np.asarray(0.01, F32), arr(784, 256))),
        ("ApplyAdam 784x256", "ResourceApplyAdam", gd,
         lambda: (*(_variable(a) for a in (arr(784, 256), arr(784, 256) ** 2, arr(784, 256) ** 2)),
                  *adam_scalars, arr(784, 256))),
        ("SparseApplyGD 100kx64 [1024]", "ResourceSparseApplyGradientDescent", gd,
         lambda: (_variable(table), np.asarray(0.01, F32), rows, ids)),
    ]


def run(options):
    rng = np.random.default_rng(11)
    cases = []
    for name, op_type, attrs, make_inputs in _cases(rng):
        pair = _pair(op_type, attrs)
        if pair is None:
            return []
        inputs = make_inputs()
        mine, twin = pair
        # In-place updates get their own variables, so both kernels start from the same state.
        twin_inputs = make_inputs() if op_type.startswith("Resource") else inputs
        steps = {"native": lambda m=mine, i=inputs: m(*i), "numpy": lambda t=twin, i=twin_inputs: t(*i)}
        check = {} if op_type.startswith("Resource") else {"native": mine(*inputs), "numpy": twin(*inputs)}
        if check and isinstance(check["native"], tuple):
            check = {k: np.concatenate([np.ravel(a) for a in v]) for k, v in check.items()}
        cases.append(Case(f"kernel {name}", steps, check=check, check_rtol=1e-3))
    return cases


BENCHMARK = Benchmark("kernels", "Native CPU kernels against their numpy twins (the fallback), per call", run)
