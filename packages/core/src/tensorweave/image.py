"""``tf.image``: decoding and encoding, resizing, cropping and flipping, and color adjustments (TF 1.15's names)."""

from tensorweave.ops.image_resize_ops import (  # noqa: F401
    ResizeMethod, resize, resize_area, resize_bicubic, resize_bilinear, resize_images, resize_nearest_neighbor,
)
