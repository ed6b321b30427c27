"""CPU kernels for non-maximum suppression: TF's greedy selection (highest score first, ties to the lower index)
with intersection-over-union of boxes whose corners may come in either order."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: the greedy loop is numpy's."""


def _iou(box, others):
    y1, x1 = np.minimum(box[0], box[2]), np.minimum(box[1], box[3])
    y2, x2 = np.maximum(box[0], box[2]), np.maximum(box[1], box[3])
    oy1, ox1 = np.minimum(others[:, 0], others[:, 2]), np.minimum(others[:, 1], others[:, 3])
    oy2, ox2 = np.maximum(others[:, 0], others[:, 2]), np.maximum(others[:, 1], others[:, 3])
    area, other_area = (y2 - y1) * (x2 - x1), (oy2 - oy1) * (ox2 - ox1)
    inter = np.maximum(np.minimum(y2, oy2) - np.maximum(y1, oy1), 0) * np.maximum(np.minimum(x2, ox2) -
                                                                                   np.maximum(x1, ox1), 0)
    union = area + other_area - inter
    with np.errstate(all="ignore"):
        return np.where((area <= 0) | (other_area <= 0), 0.0, inter / union)


def select(boxes, scores, max_output_size, iou_threshold, score_threshold):
    if boxes.ndim != 2 or boxes.shape[1] != 4 or scores.shape != (boxes.shape[0],):
        raise ValueError(f"non_max_suppression: boxes must be [n, 4] and scores [n], got {list(boxes.shape)} and "
                         f"{list(scores.shape)}")
    if not 0 <= iou_threshold <= 1:
        raise ValueError(f"non_max_suppression: iou_threshold must be in [0, 1], got {float(iou_threshold)}")
    boxes, scores = boxes.astype(np.float32), scores.astype(np.float32)
    order = [i for i in np.argsort(-scores, kind="stable") if scores[i] > score_threshold]
    selected = []
    for i in order:
        if len(selected) >= max_output_size:
            break
        if not selected or (_iou(boxes[i], boxes[selected]) <= iou_threshold).all():
            selected.append(int(i))
    return np.array(selected, np.int32)


@KERNELS.register("NonMaxSuppressionV3")
def _nms_v3(boxes, scores, max_output_size, iou_threshold, score_threshold):
    return select(boxes, scores, int(max_output_size), float(iou_threshold), float(score_threshold))


@KERNELS.register("NonMaxSuppressionV4")
def _nms_v4(boxes, scores, max_output_size, iou_threshold, score_threshold, *, pad_to_max_output_size):
    chosen = select(boxes, scores, int(max_output_size), float(iou_threshold), float(score_threshold))
    valid = np.array(len(chosen), np.int32)
    if pad_to_max_output_size:
        chosen = np.concatenate([chosen, np.zeros(int(max_output_size) - len(chosen), np.int32)])
    return chosen, valid
