"""Kernels of the resize ops, reproducing TF's CPU kernels to the last bit in the forward direction.

The sampling positions and weights are computed in float32 on the host exactly as TF computes them (its
CalculateResizeScale, legacy and half-pixel scalers, the 1025-entry cubic table, the area cell fractions),
and the per-pixel arithmetic runs in float32 in TF's order, vectorized over the whole image. The gradient
ops are the adjoint linear maps (weight matrices applied along height and width), equal to TF's scatter
loops up to float rounding.
"""

import numpy as np

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea",
                                     "ResizeBilinearGrad", "ResizeBicubicGrad", "ResizeNearestNeighborGrad"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""

_IMAGES = ["int8", "uint8", "int16", "uint16", "int32", "int64", "float16", "float32", "float64"]
_F32 = np.float32
_TABLE_SIZE = 1024


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def resize_scale(in_size, out_size, align_corners):
    """TF's CalculateResizeScale, in float32 (as TF 2.x: a 1-pixel input keeps the scale in / out even with
    align_corners, where TF 1.15's 0 made ResizeArea divide by zero)."""
    if align_corners and in_size > 1 and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _source_coords(out_size, scale, half_pixel, offset=_F32(0.5)):
    """Where each output index samples the input: TF's LegacyScaler or HalfPixelScaler (float32)."""
    i = np.arange(out_size, dtype=_F32)
    return (i + _F32(0.5)) * scale - offset if half_pixel else i * scale


def _check_images(images, size, align_corners, half_pixel_centers):
    """(height, width, new_height, new_width) after TF's ImageResizerState checks."""
    if half_pixel_centers and align_corners:
        raise _invalid("If half_pixel_centers is True, align_corners must be False.")
    if images.ndim != 4:
        raise _invalid(f"input must be 4-dimensional, got shape {list(images.shape)}")
    if images.shape[3] <= 0:
        raise _invalid("image must have at least one channel")
    if images.shape[1] <= 0 or images.shape[2] <= 0:
        raise _invalid(f"input image must be of non-zero size, got shape {list(images.shape)}")
    new_height, new_width = _size(size)
    return images.shape[1], images.shape[2], new_height, new_width


def _size(size):
    size = np.asarray(size.get() if hasattr(size, "get") else size)
    if size.shape != (2,):
        raise _invalid(f"size must be a 1-D tensor of 2 elements (new_height, new_width), got shape {list(size.shape)}")
    new_height, new_width = int(size[0]), int(size[1])
    if new_height <= 0 or new_width <= 0:
        raise _invalid(f"output dimensions must be positive, got size {[new_height, new_width]}")
    return new_height, new_width


# ---- bilinear -------------------------------------------------------------------------------------------------------
def _linear_taps(in_size, out_size, align_corners, half_pixel):
    """TF's compute_interpolation_weights: lower and upper input index and the lerp of each output index."""
    coords = _source_coords(out_size, resize_scale(in_size, out_size, align_corners), half_pixel)
    floor = np.floor(coords)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(coords).astype(np.int64), in_size - 1)
    return lower, upper, (coords - floor).astype(_F32)


@KERNELS.register("ResizeBilinear", dtypes=_IMAGES)
def _resize_bilinear(images, size, *, align_corners, half_pixel_centers, xp):
    height, width, new_height, new_width = _check_images(images, size, align_corners, half_pixel_centers)
    x = images.astype(xp.float32)
    if (new_height, new_width) == (height, width):
        return x
    y_lo, y_hi, y_lerp = (xp.asarray(a) for a in _linear_taps(height, new_height, align_corners, half_pixel_centers))
    x_lo, x_hi, x_lerp = (xp.asarray(a) for a in _linear_taps(width, new_width, align_corners, half_pixel_centers))
    top_rows, bottom_rows = x[:, y_lo], x[:, y_hi]
    x_lerp = x_lerp[:, None]
    top = top_rows[:, :, x_lo] + (top_rows[:, :, x_hi] - top_rows[:, :, x_lo]) * x_lerp
    bottom = bottom_rows[:, :, x_lo] + (bottom_rows[:, :, x_hi] - bottom_rows[:, :, x_lo]) * x_lerp
    return top + (bottom - top) * y_lerp[:, None, None]


def _linear_matrix(in_size, out_size, align_corners, half_pixel, dtype):
    """[out_size, in_size] weights of the 1-D linear interpolation (the forward map along one axis)."""
    lower, upper, lerp = _linear_taps(in_size, out_size, align_corners, half_pixel)
    weights = np.zeros((out_size, in_size), dtype)
    rows = np.arange(out_size)
    np.add.at(weights, (rows, lower), 1 - lerp.astype(dtype))
    np.add.at(weights, (rows, upper), lerp.astype(dtype))
    return weights


def _apply_adjoint(grads, rows, cols, xp):
    """sum over y, x of rows[y, i] * grads[b, y, x, c] * cols[x, j]: the transpose of a separable resize."""
    along_height = xp.einsum("byxc,yi->bixc", grads, xp.asarray(rows))
    return xp.einsum("bixc,xj->bijc", along_height, xp.asarray(cols))


def _grad_dims(grads, original, align_corners, half_pixel_centers):
    if half_pixel_centers and align_corners:
        raise _invalid("If half_pixel_centers is True, align_corners must be False.")
    if grads.ndim != 4 or original.ndim != 4:
        raise _invalid(f"input_grad and original_image must be 4-dimensional, got shapes {list(grads.shape)} "
                       f"and {list(original.shape)}")
    if min(grads.shape[1:3]) <= 0 or min(original.shape[1:3]) <= 0:
        raise _invalid("resized and original dimensions must be positive")
    return original.shape[1], original.shape[2], grads.shape[1], grads.shape[2]


def _accumulation_type(dtype):
    return np.float32 if np.dtype(dtype) == np.float16 else np.dtype(dtype)


@KERNELS.register("ResizeBilinearGrad", dtypes=["float16", "float32", "float64"])
def _resize_bilinear_grad(grads, original_image, *, align_corners, half_pixel_centers, xp):
    height, width, new_height, new_width = _grad_dims(grads, original_image, align_corners, half_pixel_centers)
    acc = _accumulation_type(original_image.dtype)
    rows = _linear_matrix(height, new_height, align_corners, half_pixel_centers, acc)
    cols = _linear_matrix(width, new_width, align_corners, half_pixel_centers, acc)
    return _apply_adjoint(grads.astype(acc), rows, cols, xp).astype(original_image.dtype)


# ---- nearest neighbor -----------------------------------------------------------------------------------------------
def nearest_indices(in_size, out_size, align_corners, half_pixel):
    """The input index each output index copies: TF's roundf (half away from zero) or floorf, clamped."""
    scale = resize_scale(in_size, out_size, align_corners)
    coords = _source_coords(out_size, scale, half_pixel, offset=_F32(0))
    floor = np.floor(coords)
    index = floor + (coords - floor >= 0.5) if align_corners else floor
    index = np.minimum(index.astype(np.int64), in_size - 1)
    return np.maximum(index, 0) if half_pixel else index


@KERNELS.register("ResizeNearestNeighbor", dtypes=_IMAGES)
def _resize_nearest_neighbor(images, size, *, align_corners, half_pixel_centers, xp):
    height, width, new_height, new_width = _check_images(images, size, align_corners, half_pixel_centers)
    rows = xp.asarray(nearest_indices(height, new_height, align_corners, half_pixel_centers))
    cols = xp.asarray(nearest_indices(width, new_width, align_corners, half_pixel_centers))
    return images[:, rows][:, :, cols]


def _one_hot(indices, size, dtype):
    matrix = np.zeros((len(indices), size), dtype)
    matrix[np.arange(len(indices)), indices] = 1
    return matrix


@KERNELS.register("ResizeNearestNeighborGrad", dtypes=["uint8", "int8", "int32", "float16", "float32", "float64"])
def _resize_nearest_neighbor_grad(grads, size, *, align_corners, half_pixel_centers, xp):
    if half_pixel_centers and align_corners:
        raise _invalid("If half_pixel_centers is True, align_corners must be False.")
    if grads.ndim != 4:
        raise _invalid(f"input must be 4-dimensional, got shape {list(grads.shape)}")
    height, width = _size(size)
    acc = _accumulation_type(grads.dtype)
    rows = _one_hot(nearest_indices(height, grads.shape[1], align_corners, half_pixel_centers), height, acc)
    cols = _one_hot(nearest_indices(width, grads.shape[2], align_corners, half_pixel_centers), width, acc)
    return _apply_adjoint(grads.astype(acc), rows, cols, xp).astype(grads.dtype)


# ---- bicubic --------------------------------------------------------------------------------------------------------
def _cubic_table(a):
    """TF's InitCoeffsTable: the cubic kernel at i/1024 and 1 + i/1024, computed in double, stored as float."""
    x = (np.arange(_TABLE_SIZE + 1) * 1.0 / _TABLE_SIZE).astype(_F32).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x = (x.astype(_F32) + _F32(1.0)).astype(np.float64)
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return near.astype(_F32), far.astype(_F32)


_TABLES = {False: _cubic_table(-0.75), True: _cubic_table(-0.5)}


def cubic_taps(in_size, out_size, align_corners, half_pixel):
    """TF's GetWeightsAndIndices for every output index: ([4, out] input indices, [4, out] float32 weights)."""
    coords = _source_coords(out_size, resize_scale(in_size, out_size, align_corners), half_pixel)
    start = np.floor(coords).astype(np.int64)
    delta = coords - start.astype(_F32)
    offset = np.rint(delta * _F32(_TABLE_SIZE)).astype(np.int64)  # lrintf: to nearest, ties to even
    near, far = _TABLES[half_pixel]
    weights = np.stack([far[offset], near[offset], near[_TABLE_SIZE - offset], far[_TABLE_SIZE - offset]])
    wanted = start + np.arange(-1, 3)[:, None]
    indices = np.clip(wanted, 0, in_size - 1)
    if half_pixel:  # Keys' cubic: taps outside the image get no weight and the rest are renormalized
        weights = np.where(indices == wanted, weights, _F32(0))
        total = ((weights[0] + weights[1]) + weights[2]) + weights[3]
        usable = np.abs(total) >= _F32(1000) * np.finfo(_F32).tiny
        inverse = _F32(1) / np.where(usable, total, _F32(1))
        weights = np.where(usable, weights * inverse, weights)
    return indices, weights.astype(_F32)


@KERNELS.register("ResizeBicubic", dtypes=_IMAGES)
def _resize_bicubic(images, size, *, align_corners, half_pixel_centers, xp):
    height, width, new_height, new_width = _check_images(images, size, align_corners, half_pixel_centers)
    x = images.astype(xp.float32)
    y_idx, y_w = (xp.asarray(a) for a in cubic_taps(height, new_height, align_corners, half_pixel_centers))
    x_idx, x_w = (xp.asarray(a) for a in cubic_taps(width, new_width, align_corners, half_pixel_centers))
    rows = [x[:, y_idx[k]] for k in range(4)]
    out = None
    for j in range(4):  # each of the 4 columns interpolated along y, then the columns along x, as TF
        column = None
        for k in range(4):
            term = rows[k][:, :, x_idx[j]] * y_w[k][:, None, None]
            column = term if column is None else column + term
        term = column * x_w[j][:, None]
        out = term if out is None else out + term
    return out


def _cubic_matrix(in_size, out_size, align_corners, half_pixel, dtype):
    indices, weights = cubic_taps(in_size, out_size, align_corners, half_pixel)
    matrix = np.zeros((out_size, in_size), dtype)
    for k in range(4):
        np.add.at(matrix, (np.arange(out_size), indices[k]), weights[k].astype(dtype))
    return matrix


@KERNELS.register("ResizeBicubicGrad", dtypes=["float32", "float64"])
def _resize_bicubic_grad(grads, original_image, *, align_corners, half_pixel_centers, xp):
    height, width, new_height, new_width = _grad_dims(grads, original_image, align_corners, half_pixel_centers)
    acc = np.dtype(original_image.dtype)
    rows = _cubic_matrix(height, new_height, align_corners, half_pixel_centers, acc)
    cols = _cubic_matrix(width, new_width, align_corners, half_pixel_centers, acc)
    return _apply_adjoint(grads.astype(acc), rows, cols, xp)


# ---- area -----------------------------------------------------------------------------------------------------------
def area_terms(in_size, out_size, align_corners):
    """TF's area cells: [terms, out] input indices, float32 weights and a mask of the terms that exist.

    Output index i covers input [i * scale, (i + 1) * scale); a partly covered input cell weighs its covered
    fraction, a fully covered one 1.0, in the order TF adds them.
    """
    scale = resize_scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=_F32)
    low, high = i * scale, (i + _F32(1)) * scale
    start, end = np.floor(low).astype(np.int64), np.ceil(high).astype(np.int64)
    count = int((end - start).max())
    cells = start + np.arange(count)[:, None]
    cells_f = cells.astype(_F32)
    next_f = (cells + 1).astype(_F32)
    inside = np.where(next_f > high, high - cells_f, _F32(1.0))
    weights = np.where(cells_f < low, np.where(next_f > high, scale, next_f - low), inside).astype(_F32)
    return np.clip(cells, 0, in_size - 1), weights, cells < end


@KERNELS.register("ResizeArea", dtypes=_IMAGES)
def _resize_area(images, size, *, align_corners, xp):
    height, width, new_height, new_width = _check_images(images, size, align_corners, False)
    x = images.astype(xp.float32)
    y_idx, y_w, y_mask = area_terms(height, new_height, align_corners)
    x_idx, x_w, x_mask = area_terms(width, new_width, align_corners)
    x_idx, x_w, x_mask = xp.asarray(x_idx), xp.asarray(x_w)[:, :, None], xp.asarray(x_mask)[:, :, None]
    height_scale, width_scale = resize_scale(height, new_height, align_corners), resize_scale(
        width, new_width, align_corners)
    inverse_area = _F32(1.0 / np.float64(height_scale * width_scale))
    total = None
    for k in range(len(y_idx)):
        rows = x[:, xp.asarray(y_idx[k])]
        row_sum = rows[:, :, x_idx[0]] * x_w[0]
        for j in range(1, len(x_idx)):  # middle cells weigh 1.0, so multiplying by the weight is exact
            row_sum = row_sum + xp.where(x_mask[j], rows[:, :, x_idx[j]] * x_w[j], _F32(0))
        term = row_sum * xp.asarray(y_w[k])[:, None, None]
        total = term if total is None else total + xp.where(xp.asarray(y_mask[k])[:, None, None], term, _F32(0))
    return total * inverse_area
