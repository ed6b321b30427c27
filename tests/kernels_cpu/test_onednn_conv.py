"""float32 convolutions on oneDNN against the numpy twins (im2col + GEMM), on the shapes that break blocked kernels.

oneDNN sums each output in its own order (blocked over channels and window), so results agree with the twin
within float32 reassociation (2e-5 of the largest magnitude), as the im2col path does.
"""

import numpy as np
import pytest

import tensorweave as tf

from tensorweave_cpu.kernels import native
from tensorweave_cpu.kernels.conv import conv_windows
from test_native_kernels import _close, _hw, _kernels, _layout

needs_onednn = pytest.mark.skipif(native.native is None or native.native.onednn is None,
                                  reason=f"{native.STATUS}; oneDNN convolutions need onednn-devel-cpu-gomp at build time")
RNG = np.random.default_rng(20)

CASES = [  # input NHWC, filter [kh, kw, in, out], strides, padding (or explicit [(top, bottom), (left, right)]), dilations
    ((1, 28, 28, 1), (5, 5, 1, 32), (1, 1), "SAME", (1, 1)),       # the LeNet layers, batch 1
    ((3, 14, 14, 32), (5, 5, 32, 64), (1, 1), "SAME", (1, 1)),
    ((2, 11, 7, 3), (3, 3, 3, 5), (1, 1), "SAME", (1, 1)),          # RGB, odd sizes
    ((2, 9, 10, 3), (2, 2, 3, 4), (2, 2), "VALID", (1, 1)),         # stride leaves the last row out: negative far pad
    ((1, 10, 9, 1), (4, 3, 1, 3), (3, 2), "SAME", (1, 1)),          # even filter, uneven strides: pad more at the end
    ((2, 12, 11, 2), (3, 3, 2, 3), (1, 1), "SAME", (2, 3)),         # dilations
    ((1, 8, 7, 3), (3, 2, 3, 2), (2, 1), [(2, 1), (0, 3)], (1, 1)),  # explicit paddings
    ((1, 2, 2, 1), (1, 1, 1, 2), (1, 1), [(4, 4), (0, 5)], (1, 1)),  # padding wider than the image
    ((4, 6, 6, 17), (1, 1, 17, 19), (1, 1), "VALID", (1, 1)),       # 1x1, channel counts off every block size
]


def _attrs(strides, padding, dilations, data_format):
    attrs = dict(T=tf.float32, strides=_hw(strides, data_format), data_format=data_format,
                 dilations=_hw(dilations, data_format))
    if isinstance(padding, str):
        return {**attrs, "padding": padding}
    spatial = [p for pair in padding for p in pair]
    explicit = [0, 0, *spatial, 0, 0] if data_format == "NHWC" else [0, 0, 0, 0, *spatial]
    return {**attrs, "padding": "EXPLICIT", "explicit_paddings": explicit}


@needs_onednn
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("x_shape,f_shape,strides,padding,dilations", CASES)
def test_onednn_convolutions_match_the_numpy_twins(x_shape, f_shape, strides, padding, dilations, data_format):
    attrs = _attrs(strides, padding, dilations, data_format)
    x = RNG.standard_normal(_layout(x_shape, data_format)).astype(np.float32)
    f = RNG.standard_normal(f_shape).astype(np.float32)
    mine, twin = _kernels("Conv2D", **attrs)
    y = twin(x, f)
    _close(mine(x, f), y, np.float32)
    dy = RNG.standard_normal(y.shape).astype(np.float32)
    mine, twin = _kernels("Conv2DBackpropInput", **attrs)
    sizes = np.array(x.shape, np.int32)
    _close(mine(sizes, f, dy), twin(sizes, f, dy), np.float32)
    mine, twin = _kernels("Conv2DBackpropFilter", **attrs)
    sizes = np.array(f.shape, np.int32)
    _close(mine(x, sizes, dy), twin(x, sizes, dy), np.float32)


def _geometry(x_shape, f_shape, strides, padding, dilations):
    explicit = () if isinstance(padding, str) else [0, 0, *[p for pair in padding for p in pair], 0, 0]
    windows = conv_windows(x_shape, f_shape, [1, *strides, 1], [1, *dilations, 1],
                           padding if isinstance(padding, str) else "EXPLICIT", "NHWC", explicit)
    return native._geometry(windows)


@needs_onednn
@pytest.mark.parametrize("x_shape,f_shape,strides,padding,dilations", CASES)
def test_oneDNN_has_a_kernel_for_every_case(x_shape, f_shape, strides, padding, dilations):
    """The cases above run on oneDNN itself, not on the im2col fallback its kernels leave geometries to."""
    x = RNG.standard_normal(x_shape).astype(np.float32)
    f = RNG.standard_normal(f_shape).astype(np.float32)
    geometry = _geometry(x_shape, f_shape, strides, padding, dilations)
    y = native.native.conv2d_onednn(x, f, None, geometry)
    assert y is not None
    assert native.native.conv2d_backprop_input_onednn(f, y, geometry) is not None
    assert native.native.conv2d_backprop_filter_onednn(x, y, geometry, f_shape[3]) is not None


@needs_onednn
def test_the_fused_bias_and_relu_match_bias_add_then_relu():
    x = RNG.standard_normal((2, 9, 8, 3)).astype(np.float32)
    f = RNG.standard_normal((3, 3, 3, 6)).astype(np.float32)
    b = RNG.standard_normal(6).astype(np.float32)
    geometry = _geometry(x.shape, f.shape, (1, 1), "SAME", (1, 1))
    _, twin = _kernels("Conv2D", T=tf.float32, strides=[1] * 4, padding="SAME", data_format="NHWC", dilations=[1] * 4)
    want = np.maximum(twin(x, f) + b, 0)
    _close(native.native.conv2d_onednn(x, f, b, geometry, relu=True), want, np.float32)
    assert (native.native.conv2d_onednn(x, f, b, geometry, relu=True) >= 0).all()


@needs_onednn
def test_conv2d_does_not_write_into_an_offered_buffer_that_is_its_own_input():
    """The executor may offer a dying input as ``out``: with as many output as input channels, that is the image."""
    attrs = dict(T=tf.float32, strides=[1] * 4, padding="SAME", data_format="NHWC", dilations=[1] * 4)
    x = RNG.standard_normal((2, 7, 7, 4)).astype(np.float32)
    f = RNG.standard_normal((3, 3, 4, 4)).astype(np.float32)
    mine, twin = _kernels("Conv2D", **attrs)
    want = twin(x, f)
    got = mine(x, f, out=x)
    assert got is not x
    _close(got, want, np.float32)
    buffer = np.empty_like(want)
    assert mine(x, f, out=buffer) is buffer
    _close(buffer, want, np.float32)


@needs_onednn
def test_a_wrong_filter_shape_is_refused():
    x = np.zeros((1, 5, 5, 2), np.float32)
    geometry = _geometry(x.shape, (3, 3, 2, 4), (1, 1), "SAME", (1, 1))
    with pytest.raises(ValueError, match="conv2d: filter does not match the convolution's geometry"):
        native.native.conv2d_onednn(x, np.zeros((3, 3, 3, 4), np.float32), None, geometry)


@needs_onednn
def test_convolutions_stay_right_after_the_primitive_cache_starts_afresh():
    """More geometries than the cache keeps (256): it is emptied and refilled, and results stay right."""
    f = RNG.standard_normal((1, 1, 1, 2)).astype(np.float32)
    first = None
    for width in range(1, 300):
        x = RNG.standard_normal((1, 1, width, 1)).astype(np.float32)
        y = native.native.conv2d_onednn(x, f, None, _geometry(x.shape, f.shape, (1, 1), "VALID", (1, 1)))
        np.testing.assert_allclose(y, x * f[0, 0], rtol=1e-6)
        first = first or (x, y)
    x, y = first
    np.testing.assert_array_equal(native.native.conv2d_onednn(x, f, None, _geometry(x.shape, f.shape, (1, 1), "VALID",
                                                                                     (1, 1))), y)
