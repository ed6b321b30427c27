"""``DistributedOptimizer``: any ``tf.train.Optimizer`` whose gradients are averaged over the ranks before
they are applied, so every rank takes the same step (Horovod's data-parallel training).

Dense gradients travel in one all-reduce op per group (by default one for the whole model: one
negotiation, fused in one buffer); sparse ones (IndexedSlices, from embedding lookups) by all-gather of
their rows, unless ``sparse_as_dense``. With one rank the gradients pass through untouched.
"""

from tensorweave import IndexedSlices
from tensorweave.train import Optimizer

from tensorweave_distributed.collective_ops import Average, Sum, _op_name, allreduce, grouped_allreduce
from tensorweave_distributed.reduction import Compression
from tensorweave_distributed.world import get_world


class DistributedOptimizer(Optimizer):
    """Wraps ``optimizer``: ``compute_gradients`` all-reduces what the wrapped one computes; everything
    else (``apply_gradients``, slots, ``variables``) is the wrapped optimizer's.

    - ``op``: Average (default) or Sum of the ranks' gradients.
    - ``compression``: ``Compression.fp16``/``bf16`` send 16-bit gradients (half the bytes).
    - ``sparse_as_dense``: turn IndexedSlices into dense tensors and all-reduce them.
    - ``num_groups``: split the dense gradients into this many all-reduce ops (0: one op for all); more
      groups let the first ones travel while the rest of the backward pass still runs.
    - ``algorithm``: the all-reduce algorithm (None: the session's, the environment's, or ``auto``).
    """

    def __init__(self, optimizer, name=None, use_locking=False, device_dense="", device_sparse="",
                 compression=Compression.none, sparse_as_dense=False, op=Average, num_groups=0, algorithm=None):
        super().__init__(use_locking, name or f"Distributed{type(optimizer).__name__}")
        self._optimizer = optimizer
        self._device_dense = device_dense
        self._device_sparse = device_sparse
        self._compression = compression
        self._sparse_as_dense = sparse_as_dense
        self._op = _op_name(op, None)
        if self._op not in (Average, Sum):
            raise ValueError(f"DistributedOptimizer averages or sums gradients; op={op!r} is neither")
        self._num_groups = num_groups
        self._algorithm = algorithm

    def compute_gradients(self, *args, **kwargs):
        grads_and_vars = self._optimizer.compute_gradients(*args, **kwargs)
        if get_world().size == 1:
            return grads_and_vars
        return list(zip(self._allreduce_grads([g for g, _ in grads_and_vars]), [v for _, v in grads_and_vars]))

    def _allreduce_grads(self, grads):
        import tensorweave as tf
        out = list(grads)
        dense = []
        with tf.name_scope(self._name + "_Allreduce"):
            for i, grad in enumerate(grads):
                if grad is None:
                    continue
                if isinstance(grad, IndexedSlices):
                    if self._sparse_as_dense:
                        dense.append(i)
                        out[i] = tf.convert_to_tensor(grad)
                    else:
                        out[i] = allreduce(grad, op=self._op, device_sparse=self._device_sparse,
                                           name=f"sparse_{i}")
                else:
                    dense.append(i)
            for group in _groups(dense, self._num_groups):
                with tf.device(self._device_dense):
                    reduced = grouped_allreduce([out[i] for i in group], op=self._op, compression=self._compression,
                                                name="dense", algorithm=self._algorithm)
                for i, r in zip(group, reduced):
                    out[i] = r
        return out

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()

    def variables(self):
        return self._optimizer.variables()


def _groups(indices, num_groups):
    if not indices:
        return []
    if num_groups <= 0 or num_groups >= len(indices):
        return [indices] if num_groups <= 0 else [[i] for i in indices]
    size, extra = divmod(len(indices), num_groups)
    groups, start = [], 0
    for g in range(num_groups):
        end = start + size + (1 if g < extra else 0)
        groups.append(indices[start:end])
        start = end
    return groups
