"""``tf.nn.convolution`` and ``tf.nn.pool``: rank-generic front ends that pick the 1-, 2- or 3-D op from the input's
rank, and ``max_pool1d``/``avg_pool1d`` (2-D pooling over an inserted height of 1, as TF)."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import conv3d_ops, conv_ops, pooling_ops, shape_ops

__all__ = ["avg_pool1d", "convolution", "max_pool1d", "pool"]

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


def convolution(input, filter=None, padding=None, strides=None, dilation_rate=None, name=None,  # noqa: A002
                data_format=None, filters=None, dilations=None):
    """An N-D convolution (N = rank - 2, from 1 to 3) with a ``spatial + [in, out]`` filter; ``strides`` and
    ``dilation_rate`` have one entry per spatial dimension."""
    filter = filter if filter is not None else filters  # noqa: A001
    dilation_rate = dilation_rate if dilation_rate is not None else dilations
    input = convert_to_tensor(input, name="input")  # noqa: A001
    n, fmt, channels_first = _spatial_rank(input, data_format, "convolution")
    strides, dilation_rate = (_ints(v, n, what, "convolution") for v, what in
                              ((strides, "strides"), (dilation_rate, "dilation_rate")))
    with graph_mod.name_scope(name, "convolution", [input, filter]):
        if n == 1:
            return conv_ops.conv1d(input, filter, strides[0], padding, data_format=fmt, dilations=dilation_rate[0])
        full = (lambda v: [1, 1, *v]) if channels_first else (lambda v: [1, *v, 1])
        if n == 2:
            return conv_ops.conv2d(input, filter, full(strides), padding, data_format=fmt,
                                   dilations=full(dilation_rate))
        return conv3d_ops.conv3d(input, filter, full(strides), padding, data_format=fmt,
                                 dilations=full(dilation_rate))


def pool(input, window_shape, pooling_type, padding, dilation_rate=None, strides=None, name=None,  # noqa: A002
         data_format=None, dilations=None):
    """N-D max ("MAX") or average ("AVG") pooling, N = rank - 2 from 1 to 3."""
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"pool: pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    input = convert_to_tensor(input, name="input")  # noqa: A001
    n, fmt, channels_first = _spatial_rank(input, data_format, "pool")
    window = _ints(window_shape, n, "window_shape", "pool")
    strides = _ints(strides, n, "strides", "pool")
    rate = _ints(dilation_rate if dilation_rate is not None else dilations, n, "dilation_rate", "pool")
    if any(r != 1 for r in rate):
        raise NotImplementedError(f"pool: dilation_rate {rate} is not supported (only 1); TF pools dilated windows "
                                  f"through space_to_batch, which Tensorweave does not have yet")
    with graph_mod.name_scope(name, f"{pooling_type.lower()}_pool", [input]):
        if n == 1:
            return (max_pool1d if pooling_type == "MAX" else avg_pool1d)(input, window, strides, padding, fmt)
        if n == 2:
            op = pooling_ops.max_pool if pooling_type == "MAX" else pooling_ops.avg_pool
            return op(input, window, strides, padding, data_format=fmt)
        op = conv3d_ops.max_pool3d if pooling_type == "MAX" else conv3d_ops.avg_pool3d
        return op(input, window, strides, padding, data_format=fmt)


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
