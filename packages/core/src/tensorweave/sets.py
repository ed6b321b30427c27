"""``tf.sets``: intersection, union, difference and size of the sets along a tensor's last dimension."""

from tensorweave.ops.set_ops import (  # noqa: F401
    difference, intersection, set_difference, set_intersection, set_size, set_union, size, union,
)
