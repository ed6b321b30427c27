"""TF1's summary ops: each returns a string tensor holding a serialized ``Summary`` protobuf, which a
training loop fetches and hands to ``FileWriter.add_summary``. Definitions and wrappers are here; the
CPU kernels that build the protos are in ``summary_kernels``.
"""

import contextlib
import logging
import re

from tensorweave import GraphKeys, add_to_collection, convert_to_tensor, dtypes, get_collection, name_scope
from tensorweave.extension import NOT_DIFFERENTIABLE, OpDefList, TensorShape, apply_op

from tensorweave_board import protos

__all__ = ["audio", "histogram", "image", "merge", "merge_all", "scalar", "tensor_summary", "text"]

_log = logging.getLogger("tensorweave_board")

DEFS = OpDefList()


def _scalar_shape(op):
    return [TensorShape([])]


_COMMON = {"grad": NOT_DIFFERENTIABLE, "shape_fn": _scalar_shape}
DEFS.define("ScalarSummary", inputs=["tags: string", "values: T"], outputs=["summary: string"],
            attrs=["T: real"], doc="A Summary with one simple_value per (tag, value) pair.", **_COMMON)
DEFS.define("HistogramSummary", inputs=["tag: string", "values: T"], outputs=["summary: string"],
            attrs=["T: real = float32"], doc="A Summary with the histogram of values (TF's default buckets).",
            **_COMMON)
DEFS.define("ImageSummary", inputs=["tag: string", "tensor: T"], outputs=["summary: string"],
            attrs=["max_images: int >= 1 = 3", "T: {uint8, float16, float32, float64} = float32",
                   "bad_color: value = (255, 0, 0, 255)"],
            doc="A Summary with up to max_images PNG images from a [batch, height, width, channels] tensor.",
            **_COMMON)
DEFS.define("AudioSummaryV2", inputs=["tag: string", "tensor: float32", "sample_rate: float32"],
            outputs=["summary: string"], attrs=["max_outputs: int >= 1 = 3"],
            doc="A Summary with up to max_outputs 16-bit WAV clips from a [batch, frames(, channels)] tensor in "
                "[-1, 1].", **_COMMON)
DEFS.define("TensorSummaryV2", inputs=["tag: string", "tensor: T", "serialized_summary_metadata: string"],
            outputs=["summary: string"], attrs=["T: any"],
            doc="A Summary holding the tensor itself, with plugin metadata (text summaries use it).", **_COMMON)
DEFS.define("MergeSummary", inputs=["inputs: N * string"], outputs=["summary: string"], attrs=["N: int >= 1"],
            doc="The values of several serialized Summaries in one; a tag may appear only once.", **_COMMON)

_INVALID_TAG = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    """``name`` with characters TensorBoard does not allow in tags replaced by '_' (and a warning)."""
    if name is None:
        return None
    cleaned = _INVALID_TAG.sub("_", name).lstrip("/")
    if cleaned != name:
        _log.warning("summary name %r is illegal; using %r instead", name, cleaned)
    return cleaned


@contextlib.contextmanager
def _summary_scope(name, family=None, values=None):
    """(tag, scope) as TF1: the tag is the op's scoped, uniquified name, with ``family`` as a prefix."""
    name, family = _clean_tag(name), _clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with name_scope(base, values=values) as scope:
        stripped = scope.rstrip("/")
        yield (stripped if family is None else f"{family}/{stripped}"), scope


def _collect(op, collections):
    for key in [GraphKeys.SUMMARIES] if collections is None else collections:
        add_to_collection(key, op)
    return op


def scalar(name, tensor, collections=None, family=None):
    """A summary of one scalar (a real number): a chart of it over steps."""
    tensor = convert_to_tensor(tensor)
    if tensor.shape.ndims not in (None, 0):
        raise ValueError(f"tf.summary.scalar({name!r}) needs a scalar, but {tensor.name} has shape {tensor.shape}; "
                         f"reduce it first (e.g. tf.reduce_mean) or use tf.summary.histogram")
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        return _collect(apply_op("ScalarSummary", [tag, tensor], name=scope), collections)


def histogram(name, values, collections=None, family=None):
    """A summary of the distribution of ``values`` (any shape): histograms over steps. NaN or Inf fail the step."""
    values = convert_to_tensor(values)
    with _summary_scope(name, family, [values]) as (tag, scope):
        return _collect(apply_op("HistogramSummary", [tag, values], name=scope), collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A summary of up to ``max_outputs`` images from a [batch, height, width, 1|3|4] tensor, as PNGs.

    Tags are '<name>/image' for one image, else '<name>/image/0', '<name>/image/1', ...
    """
    tensor = convert_to_tensor(tensor)
    if tensor.shape.ndims not in (None, 4) or (tensor.shape.ndims == 4 and tensor.shape.as_list()[-1]
                                                not in (None, 1, 3, 4)):
        raise ValueError(f"tf.summary.image({name!r}) needs a [batch, height, width, channels] tensor with 1, 3 or "
                         f"4 channels, but {tensor.name} has shape {tensor.shape}")
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        return _collect(apply_op("ImageSummary", [tag, tensor], {"max_images": max_outputs}, name=scope),
                        collections)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """A summary of up to ``max_outputs`` sound clips from a [batch, frames] or [batch, frames, channels] float
    tensor with values in [-1, 1] (clipped), played at ``sample_rate`` Hz: 16-bit WAV, as TF writes them.

    Tags are '<name>/audio' for one clip, else '<name>/audio/0', '<name>/audio/1', ...
    """
    tensor = convert_to_tensor(tensor, dtype=dtypes.float32)
    if tensor.shape.ndims not in (None, 2, 3):
        raise ValueError(f"tf.summary.audio({name!r}) needs a [batch, frames] or [batch, frames, channels] tensor, "
                         f"but {tensor.name} has shape {tensor.shape}")
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        rate = convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        return _collect(apply_op("AudioSummaryV2", [tag, tensor, rate], {"max_outputs": max_outputs}, name=scope),
                        collections)


def tensor_summary(name, tensor, summary_description=None, collections=None, summary_metadata=None, family=None,
                   display_name=None):
    """A summary holding ``tensor`` itself, with optional SummaryMetadata (plugin name and content)."""
    metadata = protos.SummaryMetadata() if summary_metadata is None else summary_metadata
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    tensor = convert_to_tensor(tensor)
    with _summary_scope(name, family, [tensor]) as (tag, scope):
        serialized = convert_to_tensor(metadata.SerializeToString(), dtype=dtypes.string)
        return _collect(apply_op("TensorSummaryV2", [tag, tensor, serialized], name=scope), collections)


def text(name, tensor, collections=None):
    """A summary of a string tensor: TensorBoard renders it as Markdown; tensorweave-board shows Markdown
    tables as tables and other text as written."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != dtypes.string:
        raise ValueError(f"tf.summary.text({name!r}) needs a string tensor, but {tensor.name} is {tensor.dtype.name}")
    metadata = protos.SummaryMetadata(plugin_data=protos.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs, collections=None, name=None):
    """One serialized Summary with the values of every summary in ``inputs``."""
    inputs = [convert_to_tensor(t) for t in inputs]
    with name_scope(name, "Merge", inputs):
        return _collect(apply_op("MergeSummary", [inputs], name="MergeSummary"), collections or [])


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """``merge`` of every summary in collection ``key`` (optionally those whose name matches ``scope``);
    None when there are none."""
    summaries = get_collection(key, scope=scope)
    if not summaries:
        return None
    return merge(summaries, name=name)
