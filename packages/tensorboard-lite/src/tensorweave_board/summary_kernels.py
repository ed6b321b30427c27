"""CPU kernels of the summary ops: each builds a ``Summary`` protobuf and returns its bytes as a scalar
string tensor, so a fetched summary is exactly what TF1 returns."""

import numpy as np

from tensorweave import errors
from tensorweave.extension import KernelSet

from tensorweave_board import protos
from tensorweave_board.histogram import histogram_proto
from tensorweave_board.images import encode_png, to_uint8
from tensorweave.extension import tensor_protos

KERNELS = KernelSet("CPU")


def _text(value):
    value = value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _bytes(value):
    value = value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _out(summary):
    return np.array(summary.SerializeToString(), dtype=object)


def _scalar_tag(tag, op_type):
    tag = np.asarray(tag, dtype=object)
    if tag.ndim != 0:
        raise errors.InvalidArgumentError(None, None, f"{op_type}: the tag must be a scalar string, got shape "
                                                      f"{list(tag.shape)}")
    return _text(tag)


@KERNELS.register("ScalarSummary")
def scalar_summary(tags, values):
    tags, values = np.asarray(tags, dtype=object), np.asarray(values)
    if tags.shape != values.shape:
        raise errors.InvalidArgumentError(None, None, (
            f"ScalarSummary: tags and values must have the same shape, got tags {list(tags.shape)} and values "
            f"{list(values.shape)}; tf.summary.scalar takes one scalar"))
    summary = protos.Summary()
    for tag, value in zip(tags.reshape(-1), values.reshape(-1)):
        summary.value.add(tag=_text(tag), simple_value=float(value))
    return _out(summary)


@KERNELS.register("HistogramSummary")
def histogram_summary(tag, values):
    tag = _scalar_tag(tag, "HistogramSummary")
    values = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise errors.InvalidArgumentError(None, None, (
            f"histogram {tag!r}: {int(bad.sum())} of {values.size} values are NaN or Inf (the first at index "
            f"{list(first)}, {values[first]}); the model may have diverged: check the learning rate and the loss"))
    summary = protos.Summary()
    summary.value.add(tag=tag, histo=histogram_proto(values))
    return _out(summary)


@KERNELS.register("ImageSummary", dtypes=["uint8", "float16", "float32", "float64"])
def image_summary(tag, tensor, *, max_images, bad_color):
    tag = _scalar_tag(tag, "ImageSummary")
    tensor = np.asarray(tensor)
    if tensor.ndim != 4 or tensor.shape[-1] not in (1, 3, 4):
        raise errors.InvalidArgumentError(None, None, (
            f"image summary {tag!r}: needs [batch, height, width, channels] with 1, 3 or 4 channels, got shape "
            f"{list(tensor.shape)}"))
    summary = protos.Summary()
    count = min(max_images, tensor.shape[0])
    for i in range(count):
        pixels = to_uint8(tensor[i], bad_color)
        value = summary.value.add(tag=f"{tag}/image" if max_images == 1 else f"{tag}/image/{i}")
        value.image.height, value.image.width, value.image.colorspace = pixels.shape
        value.image.encoded_image_string = encode_png(pixels)
    return _out(summary)


@KERNELS.register("TensorSummaryV2", dtypes=None)
def tensor_summary(tag, tensor, serialized_summary_metadata):
    summary = protos.Summary()
    value = summary.value.add(tag=_scalar_tag(tag, "TensorSummaryV2"))
    value.metadata.CopyFrom(protos.SummaryMetadata.FromString(_bytes(serialized_summary_metadata)))
    value.tensor.CopyFrom(tensor_protos.make_tensor_proto(tensor))
    return _out(summary)


@KERNELS.register("MergeSummary")
def merge_summary(*inputs):
    merged, seen = protos.Summary(), set()
    for serialized in inputs:
        for item in np.asarray(serialized, dtype=object).reshape(-1):
            part = protos.Summary.FromString(_bytes(item))
            for value in part.value:
                if value.tag in seen:
                    raise errors.InvalidArgumentError(None, None, (
                        f"MergeSummary: duplicate tag {value.tag!r} in the summaries being merged; give each "
                        f"summary its own name"))
                seen.add(value.tag)
                merged.value.add().CopyFrom(value)
    return _out(merged)
