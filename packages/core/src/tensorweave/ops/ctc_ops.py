"""Connectionist temporal classification: ``tf.nn.ctc_loss`` (TF's CTCLoss, which returns the loss and its
gradient together, as the fused cross-entropies do) and ``tf.nn.ctc_greedy_decoder`` (CTCGreedyDecoder).

Inputs are unnormalized logits ``[max_time, batch, num_classes]`` (time-major); class ``num_classes - 1`` is the
blank; labels are a SparseTensor whose row ``b`` holds example ``b``'s label sequence.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, shape_ops, transpose_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["ctc_beam_search_decoder", "ctc_greedy_decoder", "ctc_loss"]

CTC_LOSS = DEFS.define(
    "CTCLoss", inputs=["inputs: T", "labels_indices: int64", "labels_values: int32", "sequence_length: int32"],
    outputs=["loss: T", "gradient: T"],
    attrs=["preprocess_collapse_repeated: bool = False", "ctc_merge_repeated: bool = True",
           "ignore_longer_outputs_than_inputs: bool = False", "T: {float32, float64} = float32"],
    doc="Each example's negative log-probability of its labels under CTC, and its gradient w.r.t. the logits.")
CTC_GREEDY_DECODER = DEFS.define(
    "CTCGreedyDecoder", inputs=["inputs: T", "sequence_length: int32"],
    outputs=["decoded_indices: int64", "decoded_values: int64", "decoded_shape: int64", "log_probability: T"],
    attrs=["merge_repeated: bool = False", "T: {float32, float64} = float32"], grad=NOT_DIFFERENTIABLE,
    doc="The best path: each step's most likely class, repeats merged and blanks dropped.")

CTC_BEAM_SEARCH_DECODER = DEFS.define(
    "CTCBeamSearchDecoder", inputs=["inputs: T", "sequence_length: int32"],
    outputs=["decoded_indices: top_paths * int64", "decoded_values: top_paths * int64",
             "decoded_shape: top_paths * int64", "log_probability: T"],
    attrs=["beam_width: int >= 1", "top_paths: int >= 1", "merge_repeated: bool = True",
           "T: {float32, float64} = float32"], grad=NOT_DIFFERENTIABLE,
    doc="The top_paths most likely label sequences found by a beam search of beam_width prefixes.")


@CTC_LOSS.set_shape_fn
def _ctc_loss_shape(op):
    inputs = op.inputs[0].shape.with_rank(3)
    op.inputs[1].shape.with_rank(2)
    op.inputs[2].shape.with_rank(1)
    sequence_length = op.inputs[3].shape.with_rank(1)
    batch = inputs[1].merge_with(sequence_length[0])
    return [tensor_shape.TensorShape([batch]), inputs]


@CTC_LOSS.set_gradient
def _ctc_loss_grad(op, grad_loss, _):
    """The op's own gradient output, scaled by each example's incoming gradient; it has no gradient itself."""
    gradient = array_ops.prevent_gradient(op.outputs[1], message="Currently there is no way to take the second "
                                          "derivative of ctc_loss due to the fused implementation's interaction "
                                          "with tf.gradients()")
    return [shape_ops.expand_dims(grad_loss, -1) * gradient, None, None, None]


@CTC_GREEDY_DECODER.set_shape_fn
def _ctc_greedy_decoder_shape(op):
    inputs = op.inputs[0].shape.with_rank(3)
    op.inputs[1].shape.with_rank(1)
    return [tensor_shape.TensorShape([None, 2]), tensor_shape.TensorShape([None]), tensor_shape.TensorShape([2]),
            tensor_shape.TensorShape([inputs[1], 1])]


@CTC_BEAM_SEARCH_DECODER.set_shape_fn
def _ctc_beam_search_decoder_shape(op):
    inputs = op.inputs[0].shape.with_rank(3)
    op.inputs[1].shape.with_rank(1)
    paths = op.get_attr("top_paths")
    return ([tensor_shape.TensorShape([None, 2])] * paths + [tensor_shape.TensorShape([None])] * paths
            + [tensor_shape.TensorShape([2])] * paths + [tensor_shape.TensorShape([inputs[1], paths])])


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False, time_major=True, logits=None):
    """TF1's ``tf.nn.ctc_loss``: a [batch] vector of -log p(labels | inputs), for logits ``inputs``
    ([max_time, batch, num_classes], or batch-major with ``time_major=False``) and ``sequence_length`` [batch].

    ``labels`` is a SparseTensor of int32 class ids in [0, num_classes - 1); the last class is the blank.
    """
    if not isinstance(labels, SparseTensor):
        raise TypeError(f"Expected labels (first argument) to be a SparseTensor, got {type(labels).__name__}")
    if inputs is not None and logits is not None:
        raise ValueError("pass only one of inputs= and logits=")
    inputs = inputs if inputs is not None else logits
    if inputs is None or sequence_length is None:
        raise TypeError("ctc_loss needs labels, inputs and sequence_length")
    inputs = convert_to_tensor(inputs, name="inputs")
    if not time_major:
        inputs = transpose_ops.transpose(inputs, [1, 0, 2])
    loss, _ = apply_op("CTCLoss", [inputs, labels.indices, unary_math_ops.cast(labels.values, dtypes.int32),
                                   convert_to_tensor(sequence_length, dtypes.int32)],
                       {"preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
                        "ctc_merge_repeated": bool(ctc_merge_repeated),
                        "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs)},
                       name="CTCLoss")
    return loss


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True):
    """The best path of each example: ``([decoded], neg_sum_logits)``, ``decoded`` a SparseTensor
    [batch, max decoded length] of int64 class ids, ``neg_sum_logits`` [batch, 1] minus the sum of each step's
    largest logit."""
    with graph_mod.name_scope(None, "CTCGreedyDecoder", [inputs, sequence_length]):
        indices, values, shape, log_probability = apply_op(
            "CTCGreedyDecoder", [convert_to_tensor(inputs, name="inputs"),
                                 convert_to_tensor(sequence_length, dtypes.int32)],
            {"merge_repeated": bool(merge_repeated)}, name="CTCGreedyDecoder")
    return [SparseTensor(indices, values, shape)], log_probability


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1, merge_repeated=True):
    """The ``top_paths`` most likely label sequences of each example, by TF's beam search over label prefixes:
    ``(decoded, log_probabilities)``, ``decoded`` a list of ``top_paths`` int64 SparseTensors and
    ``log_probabilities`` ``[batch, top_paths]``. With ``merge_repeated`` equal neighbours in a found sequence are
    merged even across a blank, as TF1's decoder does."""
    if top_paths > beam_width:
        raise ValueError(f"ctc_beam_search_decoder: top_paths ({top_paths}) must be <= beam_width ({beam_width})")
    outputs = apply_op("CTCBeamSearchDecoder", [convert_to_tensor(inputs, name="inputs"),
                                                convert_to_tensor(sequence_length, dtypes.int32)],
                       {"beam_width": int(beam_width), "top_paths": int(top_paths),
                        "merge_repeated": bool(merge_repeated)}, name="CTCBeamSearchDecoder")
    indices, values, shapes = (outputs[i * top_paths:(i + 1) * top_paths] for i in range(3))
    return [SparseTensor(i, v, s) for i, v, s in zip(indices, values, shapes)], outputs[-1]
