"""``tf.manip``: TF 1.12's namespace of array manipulations (the same functions as at the top level)."""

from tensorweave.ops.gather_ops import gather_nd, scatter_nd  # noqa: F401
from tensorweave.ops.pad_tile_ops import tile  # noqa: F401
from tensorweave.ops.shape_ops import reshape  # noqa: F401
from tensorweave.ops.space_batch_ops import batch_to_space_nd, space_to_batch_nd  # noqa: F401
from tensorweave.ops.transpose_ops import reverse, roll  # noqa: F401
