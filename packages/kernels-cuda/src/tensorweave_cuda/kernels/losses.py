"""GPU kernels for the fused softmax cross-entropies: loss and backprop of a row in one pass of one block.

A block finds its row's maximum and the sum of exponentials (shared-memory tree reductions), then writes
the loss and ``softmax - labels`` together; float16 rows are computed in float32. Labels of the sparse form
are checked first with one reduction, so a bad label raises the CPU kernel's error before anything runs.
"""

import numpy as np

from tensorweave.extension import KernelSet

from tensorweave_cuda.kernels import compile as cc
from tensorweave_cuda.kernels.checks import first_out_of_range

KERNELS = KernelSet("GPU", priority=10)

SOURCE = r"""
__device__ acc_t block_reduce(acc_t value, bool take_max, acc_t* shared) {
    shared[threadIdx.x] = value;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            acc_t other = shared[threadIdx.x + half];
            acc_t mine = shared[threadIdx.x];
            shared[threadIdx.x] = take_max ? (other > mine ? other : mine) : mine + other;
        }
        __syncthreads();
    }
    acc_t result = shared[0];
    __syncthreads();
    return result;
}

/* The row's maximum and log(sum(exp(x - max))). */
__device__ void row_stats(const scalar_t* row, long long classes, acc_t* shared, acc_t* max_out, acc_t* log_sum) {
    acc_t m = LOWEST;
    for (long long j = threadIdx.x; j < classes; j += blockDim.x) {
        acc_t x = load(row[j]);
        m = x > m ? x : m;
    }
    m = block_reduce(m, true, shared);
    acc_t s = 0;
    for (long long j = threadIdx.x; j < classes; j += blockDim.x) s += exp(load(row[j]) - m);
    *max_out = m;
    *log_sum = log(block_reduce(s, false, shared));
}

extern "C" __global__ void softmax_xent(const scalar_t* logits, const scalar_t* labels, long long rows,
                                        long long classes, scalar_t* loss, scalar_t* backprop) {
    __shared__ acc_t shared[256];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const scalar_t* row = logits + r * classes;
        const scalar_t* label = labels + r * classes;
        acc_t m, log_sum;
        row_stats(row, classes, shared, &m, &log_sum);
        acc_t total = 0;
        for (long long j = threadIdx.x; j < classes; j += blockDim.x) {
            acc_t log_prob = load(row[j]) - m - log_sum;
            acc_t y = load(label[j]);
            total -= y * log_prob;
            backprop[r * classes + j] = store(exp(log_prob) - y);
        }
        total = block_reduce(total, false, shared);
        if (threadIdx.x == 0) loss[r] = store(total);
    }
}

extern "C" __global__ void sparse_softmax_xent(const scalar_t* logits, const index_t* labels, long long rows,
                                               long long classes, scalar_t* loss, scalar_t* backprop) {
    __shared__ acc_t shared[256];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const scalar_t* row = logits + r * classes;
        long long label = (long long)labels[r];
        acc_t m, log_sum;
        row_stats(row, classes, shared, &m, &log_sum);
        for (long long j = threadIdx.x; j < classes; j += blockDim.x) {
            acc_t log_prob = load(row[j]) - m - log_sum;
            backprop[r * classes + j] = store(exp(log_prob) - (j == label ? (acc_t)1 : (acc_t)0));
            if (j == label) loss[r] = store(-log_prob);
        }
    }
}
"""


def check_dense(logits_shape, labels_shape):
    if tuple(logits_shape) != tuple(labels_shape) or len(logits_shape) != 2:
        raise ValueError(f"logits and labels must be 2-D and the same shape: logits {list(logits_shape)} vs "
                         f"labels {list(labels_shape)}")


def check_sparse(logits_shape, labels_shape):
    if len(logits_shape) != 2 or len(labels_shape) != 1 or labels_shape[0] != logits_shape[0]:
        raise ValueError(f"logits must be 2-D and labels 1-D with the same first dimension: logits "
                         f"{list(logits_shape)} vs labels {list(labels_shape)}")


def bad_label_error(labels, at, classes):
    """The CPU kernel's message for the first label outside [0, classes); ``labels`` is a host array."""
    shown = " ".join(str(int(v)) for v in labels[:20])
    return ValueError(f"Received a label value of {int(labels[at])} which is outside the valid range of "
                      f"[0, {classes}). Label values: {shown}{' ...' if labels.shape[0] > 20 else ''}")


@KERNELS.register("SoftmaxCrossEntropyWithLogits", dtypes=list(cc.FLOATS))
def _softmax_xent(logits, labels, *, xp):
    check_dense(logits.shape, labels.shape)
    logits, labels = xp.ascontiguousarray(logits), xp.ascontiguousarray(labels, dtype=logits.dtype)
    rows, classes = logits.shape
    loss = xp.empty((rows,), logits.dtype)
    backprop = xp.empty_like(logits)
    kernel = cc.function(SOURCE, "softmax_xent", logits.dtype)
    cc.launch_rows(kernel, rows, classes, (logits, labels, np.int64(rows), np.int64(classes), loss, backprop))
    return loss, backprop


@KERNELS.register("SparseSoftmaxCrossEntropyWithLogits", dtypes=list(cc.FLOATS))
def _sparse_softmax_xent(logits, labels, *, xp):
    check_sparse(logits.shape, labels.shape)
    rows, classes = logits.shape
    at = first_out_of_range(labels, 0, classes)
    if at is not None:
        raise bad_label_error(xp.asnumpy(labels), at, classes)
    logits, labels = xp.ascontiguousarray(logits), xp.ascontiguousarray(labels)
    loss = xp.empty((rows,), logits.dtype)
    backprop = xp.empty_like(logits)
    kernel = cc.function(SOURCE, "sparse_softmax_xent", logits.dtype, labels.dtype)
    cc.launch_rows(kernel, rows, classes, (logits, labels, np.int64(rows), np.int64(classes), loss, backprop))
    return loss, backprop
