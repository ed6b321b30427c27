"""``tf.image``: decoding and encoding, resizing, cropping and flipping, and color adjustments (TF 1.15's names)."""

from tensorweave.ops.image_codec_ops import (  # noqa: F401
    decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png,
)
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
from tensorweave.ops.image_geometry_ops import (  # noqa: F401
    central_crop, crop_to_bounding_box, flip_left_right, flip_up_down, pad_to_bounding_box, random_flip_left_right,
    random_flip_up_down, resize_image_with_crop_or_pad, rot90, transpose_image,
)
from tensorweave.ops.random_ops import random_crop  # noqa: F401

transpose = transpose_image
resize_with_crop_or_pad = resize_image_with_crop_or_pad
from tensorweave.ops.image_quality_ops import (  # noqa: F401,E402
    image_gradients, psnr, rgb_to_yiq, rgb_to_yuv, sobel_edges, ssim, total_variation, yiq_to_rgb, yuv_to_rgb,
)
from tensorweave.ops.image_boxes_ops import non_max_suppression, non_max_suppression_padded  # noqa: F401,E402
