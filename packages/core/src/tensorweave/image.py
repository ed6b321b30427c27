"""``tf.image``: decoding and encoding, resizing, cropping and flipping, and color adjustments (TF 1.15's names)."""

from tensorweave.ops.image_color_ops import (  # noqa: F401
    adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation, hsv_to_rgb, random_brightness,
    random_contrast, random_hue, random_saturation, rgb_to_hsv,
)
from tensorweave.ops.image_convert_ops import (  # noqa: F401
    convert_image_dtype, grayscale_to_rgb, per_image_standardization, rgb_to_grayscale,
)
from tensorweave.ops.image_resize_ops import (  # noqa: F401
    ResizeMethod, resize, resize_area, resize_bicubic, resize_bilinear, resize_images, resize_nearest_neighbor,
)
