"""TF1's ``tf.saved_model.signature_def_utils``: SignatureDefs, the named inputs and outputs a server calls."""

from tensorweave import dtypes
from tensorweave.protos.meta_graph import SignatureDef
from tensorweave.saved_model import signature_constants as sc
from tensorweave.saved_model.utils import build_tensor_info

__all__ = ["build_signature_def", "classification_signature_def", "is_valid_signature", "predict_signature_def",
           "regression_signature_def"]


def build_signature_def(inputs=None, outputs=None, method_name=None):
    """A SignatureDef from {key: TensorInfo} maps and a method name."""
    signature = SignatureDef()
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    if method_name is not None:
        signature.method_name = method_name
    return signature


def _infos(tensors):
    return {key: build_tensor_info(t) for key, t in tensors.items()}


def predict_signature_def(inputs, outputs):
    """A predict signature: {key: tensor} inputs and outputs."""
    if inputs is None or not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if outputs is None or not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def(_infos(inputs), _infos(outputs),
                               sc.PREDICT_METHOD_NAME)


def _examples(examples, what):
    if examples is None:
        raise ValueError(f"{what} examples cannot be None.")
    if getattr(examples, "dtype", None) is not dtypes.string:
        raise ValueError(f"{what} examples must be a string Tensor (serialized tf.Example protos), got {examples!r}.")
    return {sc.CLASSIFY_INPUTS: build_tensor_info(examples)}


def classification_signature_def(examples, classes, scores):
    """A classify signature: serialized Examples in; string ``classes`` and/or float ``scores`` out."""
    inputs = _examples(examples, "Classification")
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    outputs = {}
    if classes is not None:
        if classes.dtype is not dtypes.string:
            raise ValueError(f"Classification classes must be a string Tensor, got {classes!r}.")
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = build_tensor_info(classes)
    if scores is not None:
        if not scores.dtype.is_floating:
            raise ValueError(f"Classification scores must be a float Tensor, got {scores!r}.")
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
    return build_signature_def(inputs, outputs, sc.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """A regress signature: serialized Examples in, float ``predictions`` out."""
    inputs = _examples(examples, "Regression")
    if predictions is None:
        raise ValueError("Regression predictions cannot be None.")
    if not predictions.dtype.is_floating:
        raise ValueError(f"Regression predictions must be a float Tensor, got {predictions!r}.")
    return build_signature_def(inputs, {sc.REGRESS_OUTPUTS: build_tensor_info(predictions)}, sc.REGRESS_METHOD_NAME)


def _is_string_info(info):
    return info.dtype == dtypes.string.as_datatype_enum


def _is_float_info(info):
    return info.dtype in (d.as_datatype_enum for d in dtypes.FLOATING)


def is_valid_signature(signature_def):
    """Whether ``signature_def`` is a well-formed predict, classify or regress signature (as TF Serving checks)."""
    if signature_def is None or not signature_def.method_name:
        return False
    inputs, outputs, method = signature_def.inputs, signature_def.outputs, signature_def.method_name
    if method == sc.PREDICT_METHOD_NAME:
        return bool(inputs) and bool(outputs)
    if method == sc.CLASSIFY_METHOD_NAME:
        if set(inputs) != {sc.CLASSIFY_INPUTS} or not _is_string_info(inputs[sc.CLASSIFY_INPUTS]):
            return False
        if not outputs or not set(outputs) <= {sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES}:
            return False
        classes, scores = outputs.get(sc.CLASSIFY_OUTPUT_CLASSES), outputs.get(sc.CLASSIFY_OUTPUT_SCORES)
        return (classes is None or _is_string_info(classes)) and (scores is None or _is_float_info(scores))
    if method == sc.REGRESS_METHOD_NAME:
        return (set(inputs) == {sc.REGRESS_INPUTS} and _is_string_info(inputs[sc.REGRESS_INPUTS])
                and set(outputs) == {sc.REGRESS_OUTPUTS} and _is_float_info(outputs[sc.REGRESS_OUTPUTS]))
    return False
