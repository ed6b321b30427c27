"""Box selection: ``tf.image.non_max_suppression`` (NonMaxSuppressionV3) and ``_padded`` (NonMaxSuppressionV4),
greedy by score as TF's kernel; not differentiable."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value

DEFS = OpDefList()

__all__ = []  # tf.image's only
IMAGE = ["non_max_suppression", "non_max_suppression_padded"]

_INPUTS = ["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: float32", "score_threshold: float32"]


def _selected_shape(op):
    n = constant_value(op.inputs[2])
    return tensor_shape.TensorShape([None if n is None else int(n)]) if op.type.endswith("V4") and \
        op.get_attr("pad_to_max_output_size") else tensor_shape.TensorShape([None])


V3 = DEFS.define("NonMaxSuppressionV3", inputs=_INPUTS, outputs=["selected_indices: int32"],
                 attrs=["T: {float16, float32} = float32"], grad=NOT_DIFFERENTIABLE, shape_fn=_selected_shape,
                 doc="Indices of at most max_output_size boxes, by descending score, none overlapping a chosen one "
                     "by more than iou_threshold, none scoring at or below score_threshold.")
V4 = DEFS.define("NonMaxSuppressionV4", inputs=_INPUTS, outputs=["selected_indices: int32", "valid_outputs: int32"],
                 attrs=["T: {float16, float32} = float32", "pad_to_max_output_size: bool = False"],
                 grad=NOT_DIFFERENTIABLE,
                 shape_fn=lambda op: [_selected_shape(op), tensor_shape.TensorShape([])],
                 doc="NonMaxSuppressionV3, its selection padded with 0 to max_output_size if asked, and its count.")


def _inputs(boxes, scores, max_output_size, iou_threshold, score_threshold):
    boxes = convert_to_tensor(boxes, name="boxes")
    return [boxes, convert_to_tensor(scores, dtype=boxes.dtype, name="scores"),
            convert_to_tensor(max_output_size, dtypes.int32, name="max_output_size"),
            convert_to_tensor(iou_threshold, dtypes.float32, name="iou_threshold"),
            convert_to_tensor(score_threshold, dtypes.float32, name="score_threshold")]


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                        name=None):
    """Greedy non-maximum suppression of [n, 4] boxes (y1, x1, y2, x2, any corner order) by their [n] scores."""
    with graph_mod.name_scope(name, "non_max_suppression"):
        return apply_op("NonMaxSuppressionV3", _inputs(boxes, scores, max_output_size, iou_threshold,
                                                       score_threshold), name="NonMaxSuppressionV3")


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"),
                               pad_to_max_output_size=False, name=None):
    """(selected indices, how many are valid): as non_max_suppression, padded with 0 to max_output_size if asked."""
    with graph_mod.name_scope(name, "non_max_suppression_padded"):
        return apply_op("NonMaxSuppressionV4", _inputs(boxes, scores, max_output_size, iou_threshold,
                                                       score_threshold),
                        {"pad_to_max_output_size": bool(pad_to_max_output_size)}, name="NonMaxSuppressionV4")
