"""``tf.nn.convolution`` and ``tf.nn.pool``: rank-generic front ends that pick the 1-, 2- or 3-D op from the input's
rank, and ``max_pool1d``/``avg_pool1d`` (2-D pooling over an inserted height of 1, as TF). Dilated windows go
through ``with_space_to_batch``, as TF1 builds them: SpaceToBatchND, the undilated op with VALID padding,
BatchToSpaceND."""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import concat_split_ops, conv3d_ops, conv_ops, pooling_ops, shape_ops, space_batch_ops

__all__ = ["avg_pool1d", "convolution", "max_pool1d", "pool", "with_space_to_batch"]

_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


def _spatial_rank(input, data_format, who):  # noqa: A002
    rank = input.shape.ndims
    if rank not in (3, 4, 5):
        raise ValueError(f"{who}: input must have rank 3, 4 or 5 (1 to 3 spatial dimensions), got shape "
                         f"{input.shape} ({input.name})")
    n = rank - 2
    fmt = data_format or _FORMATS[n][0]
    if fmt not in _FORMATS[n]:
        raise ValueError(f"{who}: data_format for an input of rank {rank} must be one of {_FORMATS[n]}, got {fmt!r}")
    return n, fmt, fmt.startswith("NC")


def _ints(value, n, what, who):
    values = [1] * n if value is None else ([int(value)] * n if isinstance(value, int) else [int(v) for v in value])
    if len(values) != n:
        raise ValueError(f"{who}: {what} must have {n} entries (one per spatial dimension), got {value!r}")
    return values


def _strides_and_rate(strides, rate, who):
    if any(s > 1 for s in strides) and any(r > 1 for r in rate):
        raise ValueError(f"{who}: strides > 1 not supported in conjunction with dilation_rate > 1, got strides="
                         f"{strides} and dilation_rate={rate}")
    if any(r < 1 for r in rate) or any(s < 1 for s in strides):
        raise ValueError(f"{who}: strides and dilation_rate must be positive, got {strides} and {rate}")


def convolution(input, filter=None, padding=None, strides=None, dilation_rate=None, name=None,  # noqa: A002
                data_format=None, filters=None, dilations=None):
    """An N-D convolution (N = rank - 2, from 1 to 3) with a ``spatial + [in, out]`` filter; ``strides`` and
    ``dilation_rate`` have one entry per spatial dimension (a dilated one runs through ``with_space_to_batch``)."""
    filter = filter if filter is not None else filters  # noqa: A001
    dilation_rate = dilation_rate if dilation_rate is not None else dilations
    input = convert_to_tensor(input, name="input")  # noqa: A001
    n, fmt, channels_first = _spatial_rank(input, data_format, "convolution")
    strides, dilation_rate = (_ints(v, n, what, "convolution") for v, what in
                              ((strides, "strides"), (dilation_rate, "dilation_rate")))
    _strides_and_rate(strides, dilation_rate, "convolution")
    full = (lambda v: [1, 1, *v]) if channels_first else (lambda v: [1, *v, 1])

    def op(converted, _, converted_padding):
        if n == 1:
            return conv_ops.conv1d(converted, filter, strides[0], converted_padding, data_format=fmt)
        conv = conv_ops.conv2d if n == 2 else conv3d_ops.conv3d
        return conv(converted, filter, full(strides), converted_padding, data_format=fmt)

    with graph_mod.name_scope(name, "convolution", [input, filter]):
        filter = convert_to_tensor(filter, name="filter")  # noqa: A001
        window = filter.shape.with_rank(n + 2).as_list()[:n]
        if None in window:
            window = shape_ops.shape(filter, out_type=dtypes.int32)[:n]
        return with_space_to_batch(input, dilation_rate, padding, op, filter_shape=window, data_format=fmt)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None, spatial_dims=None,  # noqa: A002
                        data_format=None):
    """``op(converted_input, num_spatial_dims, padding)`` on a dilated lattice, as TF1: for ``dilation_rate``
    > 1, SpaceToBatchND folds each lattice offset into the batch (padding for SAME, ``filter_shape`` being the
    undilated window, and up to a multiple of the rate), ``op`` runs with VALID padding, and BatchToSpaceND
    unfolds and crops. ``spatial_dims`` defaults to the dimensions after the batch (after the channels for an
    "NC..." ``data_format``)."""
    input = convert_to_tensor(input, name="input")  # noqa: A002
    rate = [int(r) for r in np.asarray(dilation_rate).reshape(-1)]
    n = len(rate)
    if any(r < 1 for r in rate):
        raise ValueError(f"with_space_to_batch: dilation_rate must be positive, got {rate}")
    start = 2 if data_format is not None and data_format.startswith("NC") else 1
    spatial_dims = list(range(start, start + n)) if spatial_dims is None else [int(d) for d in spatial_dims]
    if len(spatial_dims) != n or sorted(set(spatial_dims)) != spatial_dims or spatial_dims[0] < 1:
        raise ValueError(f"with_space_to_batch: spatial_dims must be {n} increasing positive dimensions (one per "
                         f"dilation_rate entry), got {spatial_dims}")
    input.shape.with_rank_at_least(spatial_dims[-1] + 1)
    if all(r == 1 for r in rate):
        return op(input, n, padding)
    base = _base_paddings(padding, filter_shape, rate, spatial_dims, data_format)
    dims = input.shape.as_list() if input.shape.ndims is not None else None
    spatial = [dims[d] for d in spatial_dims] if dims is not None else None
    if spatial is None or None in spatial:
        whole = shape_ops.shape(input, out_type=dtypes.int32)
        spatial = concat_split_ops.stack([whole[d] for d in spatial_dims])
    paddings, crops = space_batch_ops.required_space_to_batch_paddings(spatial, rate, base_paddings=base)
    block, paddings, crops = (_adjust(v, fill, spatial_dims) for v, fill in ((rate, 1), (paddings, 0), (crops, 0)))
    converted = space_batch_ops.space_to_batch_nd(input, block, paddings)
    return space_batch_ops.batch_to_space_nd(op(converted, n, "VALID"), block, crops)


def _base_paddings(padding, filter_shape, rate, spatial_dims, data_format):
    """The padding the undilated op would have added: (window - 1) * rate split as SAME splits it, none for
    VALID, or the spatial rows of explicit [before, after] pairs."""
    n = len(rate)
    if not isinstance(padding, str):
        pairs = np.asarray(padding, np.int32).reshape(-1, 2)
        return pairs[spatial_dims] if pairs.shape[0] > n else pairs
    if padding == "VALID":
        return np.zeros([n, 2], np.int32)
    if padding != "SAME":
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    if filter_shape is None:
        raise ValueError("with_space_to_batch: filter_shape must be given for padding='SAME'")
    if hasattr(filter_shape, "op"):
        extra = (filter_shape - 1) * np.asarray(rate, np.int32)
        return concat_split_ops.stack([extra // 2, extra - extra // 2], axis=1)
    extra = (np.asarray(filter_shape, np.int32).reshape(-1)[:n] - 1) * np.asarray(rate, np.int32)
    return np.stack([extra // 2, extra - extra // 2], axis=1)


def _adjust(value, fill, spatial_dims):
    """Rows for dimensions 1..max(spatial_dims): ``value``'s rows at the spatial ones, ``fill`` elsewhere."""
    if not hasattr(value, "op"):
        value = np.asarray(value, np.int32)
        out = np.full((spatial_dims[-1],) + value.shape[1:], fill, np.int32)
        out[[d - 1 for d in spatial_dims]] = value
        return out
    rows = [value[spatial_dims.index(d)] if d in spatial_dims else
            np.full(value.shape.as_list()[1:], fill, np.int32) for d in range(1, spatial_dims[-1] + 1)]
    return concat_split_ops.stack(rows)


def pool(input, window_shape, pooling_type, padding, dilation_rate=None, strides=None, name=None,  # noqa: A002
         data_format=None, dilations=None):
    """N-D max ("MAX") or average ("AVG") pooling, N = rank - 2 from 1 to 3; a dilated window (VALID padding
    only, as TF) runs through ``with_space_to_batch``."""
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"pool: pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    input = convert_to_tensor(input, name="input")  # noqa: A001
    n, fmt, channels_first = _spatial_rank(input, data_format, "pool")
    window = _ints(window_shape, n, "window_shape", "pool")
    strides = _ints(strides, n, "strides", "pool")
    rate = _ints(dilation_rate if dilation_rate is not None else dilations, n, "dilation_rate", "pool")
    _strides_and_rate(strides, rate, "pool")
    if padding == "SAME" and any(r > 1 for r in rate):
        raise ValueError(f"pool: pooling with 'SAME' padding is not implemented for dilation_rate > 1 (as in TF), "
                         f"got dilation_rate={rate}; pad the input with tf.pad and use 'VALID'")
    if any(s > w for s, w in zip(strides, window)):
        raise ValueError(f"pool: strides > window_shape not supported due to inconsistency between CPU and GPU "
                         f"implementations (as in TF), got strides={strides} and window_shape={window}")

    def op(converted, _, converted_padding):
        if n == 1:
            pool1d = max_pool1d if pooling_type == "MAX" else avg_pool1d
            return pool1d(converted, window, strides, converted_padding, fmt)
        if n == 2:
            pool2d = pooling_ops.max_pool if pooling_type == "MAX" else pooling_ops.avg_pool
            return pool2d(converted, window, strides, converted_padding, data_format=fmt)
        pool3d = conv3d_ops.max_pool3d if pooling_type == "MAX" else conv3d_ops.avg_pool3d
        return pool3d(converted, window, strides, converted_padding, data_format=fmt)

    with graph_mod.name_scope(name, f"{pooling_type.lower()}_pool", [input]):
        return with_space_to_batch(input, rate, padding, op, filter_shape=window, data_format=fmt)


def _pool1d(op, input, ksize, strides, padding, data_format, name, default_name):  # noqa: A002
    data_format = data_format or "NWC"
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"{default_name}: data_format must be 'NWC' or 'NCW', got {data_format!r}")
    channels_first = data_format == "NCW"

    def width(value, what):
        values = [int(value)] if isinstance(value, int) else [int(v) for v in value]
        if len(values) == 3:
            values = [values[2 if channels_first else 1]]
        if len(values) != 1:
            raise ValueError(f"{default_name}: {what} must be an int or a list of 1 or 3 ints, got {value!r}")
        return [1, 1, 1, values[0]] if channels_first else [1, 1, values[0], 1]

    with graph_mod.name_scope(name, default_name, [input]):
        expanded = shape_ops.expand_dims(input, 2 if channels_first else 1)
        result = op(expanded, width(ksize, "ksize"), width(strides, "strides"), padding,
                    data_format="NCHW" if channels_first else "NHWC")
        return shape_ops.squeeze(result, [2 if channels_first else 1])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Max pooling of a [batch, width, channels] ("NWC") or [batch, channels, width] ("NCW") tensor."""
    return _pool1d(pooling_ops.max_pool, input, ksize, strides, padding, data_format, name, "MaxPool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Average pooling of a 3-D tensor; SAME padding's padded cells are not counted, as in TF."""
    return _pool1d(pooling_ops.avg_pool, input, ksize, strides, padding, data_format, name, "AvgPool1D")
