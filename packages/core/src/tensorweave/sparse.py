"""``tf.sparse``: the sparse-tensor ops under TF 1.15's short names (``tf.sparse.to_dense`` is
``tf.sparse_tensor_to_dense``, ``tf.sparse.matmul`` is ``tf.sparse_tensor_dense_matmul``, ...)."""

from tensorweave.framework.sparse_tensor import SparseTensor  # noqa: F401
from tensorweave.ops.accumulator_ops import SparseConditionalAccumulator  # noqa: F401
from tensorweave.ops.mask_ops import sparse_mask as mask  # noqa: F401
from tensorweave.ops.sparse_cross_ops import sparse_cross as cross  # noqa: F401
from tensorweave.ops.sparse_cross_ops import sparse_cross_hashed as cross_hashed  # noqa: F401
from tensorweave.ops.sparse_elementwise_ops import sparse_maximum as maximum  # noqa: F401
from tensorweave.ops.sparse_elementwise_ops import sparse_minimum as minimum  # noqa: F401
from tensorweave.ops.sparse_math_ops import sparse_add as add  # noqa: F401
from tensorweave.ops.sparse_math_ops import sparse_reduce_max as reduce_max  # noqa: F401
from tensorweave.ops.sparse_math_ops import sparse_reduce_max_sparse as reduce_max_sparse  # noqa: F401
from tensorweave.ops.sparse_math_ops import sparse_reduce_sum as reduce_sum  # noqa: F401
from tensorweave.ops.sparse_math_ops import sparse_reduce_sum_sparse as reduce_sum_sparse  # noqa: F401
from tensorweave.ops.sparse_math_ops import sparse_softmax as softmax  # noqa: F401
from tensorweave.ops.sparse_math_ops import sparse_tensor_dense_matmul as matmul  # noqa: F401
from tensorweave.ops.sparse_math_ops import sparse_tensor_dense_matmul as sparse_dense_matmul  # noqa: F401
from tensorweave.ops.sparse_ops import from_dense  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_concat as concat  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_fill_empty_rows as fill_empty_rows  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_merge as merge  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_placeholder as placeholder  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_reorder as reorder  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_reshape as reshape  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_retain as retain  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_tensor_to_dense as to_dense  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_to_indicator as to_indicator  # noqa: F401
from tensorweave.ops.sparse_ops import sparse_transpose as transpose  # noqa: F401
from tensorweave.ops.sparse_segment_ops import sparse_segment_mean as segment_mean  # noqa: F401
from tensorweave.ops.sparse_segment_ops import sparse_segment_sqrt_n as segment_sqrt_n  # noqa: F401
from tensorweave.ops.sparse_segment_ops import sparse_segment_sum as segment_sum  # noqa: F401
from tensorweave.ops.sparse_slice_ops import sparse_expand_dims as expand_dims  # noqa: F401
from tensorweave.ops.sparse_slice_ops import sparse_eye as eye  # noqa: F401
from tensorweave.ops.sparse_slice_ops import sparse_reset_shape as reset_shape  # noqa: F401
from tensorweave.ops.sparse_slice_ops import sparse_slice as slice  # noqa: F401,A004
from tensorweave.ops.sparse_slice_ops import sparse_split as split  # noqa: F401
