"""What a served model is fed: ``ServingInputReceiver`` (the receiver placeholders and the features the model_fn
sees), ``TensorServingInputReceiver`` (a single Tensor as features) and the two builders of receiver fns: one
parsing serialized tf.Examples, one feeding raw tensors."""

import collections

from tensorweave import dtypes
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.array_ops import placeholder
from tensorweave.ops.parsing_ops import parse_example
from tensorweave.ops.sparse_ops import sparse_placeholder

__all__ = ["ServingInputReceiver", "TensorServingInputReceiver", "build_parsing_serving_input_receiver_fn",
           "build_raw_serving_input_receiver_fn"]

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"
_SINGLE_DEFAULT_NAMES = {"feature": SINGLE_FEATURE_DEFAULT_NAME, "receiver_tensor": SINGLE_RECEIVER_DEFAULT_NAME,
                         "receiver_tensors_alternative": SINGLE_RECEIVER_DEFAULT_NAME}


def _check_tensor(tensor, name, error_label="feature"):
    if not isinstance(tensor, (Tensor, SparseTensor)):
        fmt_name = f" {name}" if name else ""
        raise ValueError(f"{error_label}{fmt_name} must be a Tensor or SparseTensor.")


def _wrap_and_check_input_tensors(tensors, field_name):
    if tensors is None:
        raise ValueError(f"{field_name}s must be defined.")
    if not isinstance(tensors, dict):
        tensors = {_SINGLE_DEFAULT_NAMES[field_name]: tensors}
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise ValueError(f"{field_name} keys must be strings: {name}.")
        _check_tensor(tensor, name, error_label=field_name)
    return tensors


class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """``features`` (what the model_fn gets) computed from ``receiver_tensors`` (what a client feeds)."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = _wrap_and_check_input_tensors(features, "feature")
        receiver_tensors = _wrap_and_check_input_tensors(receiver_tensors, "receiver_tensor")
        if receiver_tensors_alternatives is not None:
            if not isinstance(receiver_tensors_alternatives, dict):
                raise ValueError(f"receiver_tensors_alternatives must be a dict: {receiver_tensors_alternatives}.")
            receiver_tensors_alternatives = {
                name: _wrap_and_check_input_tensors(alt, "receiver_tensors_alternative")
                for name, alt in receiver_tensors_alternatives.items()}
        return super().__new__(cls, features=features, receiver_tensors=receiver_tensors,
                               receiver_tensors_alternatives=receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple(
        "TensorServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """A ServingInputReceiver whose features are one Tensor (for a model_fn taking a Tensor, not a dict)."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        _check_tensor(features, None)
        receiver = ServingInputReceiver(features, receiver_tensors, receiver_tensors_alternatives)
        return super().__new__(cls, features=receiver.features[SINGLE_FEATURE_DEFAULT_NAME],
                               receiver_tensors=receiver.receiver_tensors,
                               receiver_tensors_alternatives=receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn fed a batch of serialized tf.Example protos (``examples``), parsed with ``feature_spec``."""
    def serving_input_receiver_fn():
        serialized = placeholder(dtype=dtypes.string, shape=[default_batch_size], name="input_example_tensor")
        return ServingInputReceiver(parse_example(serialized, feature_spec), {"examples": serialized})
    return serving_input_receiver_fn


def _placeholder_from_tensor(t, default_batch_size=None):
    if isinstance(t, SparseTensor):
        shape = t.get_shape().as_list() if t.get_shape().rank is not None else None
        if shape:
            shape[0] = default_batch_size
        return sparse_placeholder(dtype=t.dtype, shape=shape, name=t.op.name)
    shape = t.get_shape().as_list() if t.get_shape().rank is not None else None
    if shape:
        shape[0] = default_batch_size
    return placeholder(dtype=t.dtype, shape=TensorShape(shape), name=t.op.name)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn fed the features themselves: one placeholder like each of ``features`` (a dict of
    Tensors, or one Tensor), its batch dimension ``default_batch_size``."""
    def serving_input_receiver_fn():
        if not isinstance(features, dict):
            tensor = _placeholder_from_tensor(features, default_batch_size)
            return TensorServingInputReceiver(tensor, {SINGLE_RECEIVER_DEFAULT_NAME: tensor})
        receiver_tensors = {name: _placeholder_from_tensor(t, default_batch_size) for name, t in features.items()}
        return ServingInputReceiver(receiver_tensors, receiver_tensors)
    return serving_input_receiver_fn
