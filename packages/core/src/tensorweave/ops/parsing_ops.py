"""Parsing serialized ``tf.train.Example`` and ``SequenceExample`` protos into tensors (TF1's ParseExample,
ParseSingleExample and ParseSingleSequenceExample, with TF 1.15's signatures): ``tf.parse_example``,
``tf.parse_single_example`` and ``tf.parse_single_sequence_example``. FixedLenFeatures become dense tensors,
VarLenFeatures SparseTensors; the feature specs are ``parsing_config``."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.parsing_config import (
    FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, dense_default_tensors, features_to_raw_params,
)

DEFS = OpDefList()

__all__ = ["parse_example", "parse_single_example", "parse_single_sequence_example"]

_TYPES = "list({float32, int64, string}) >= 0"
_SHAPES = "list(shape) >= 0"

PARSE_EXAMPLE = DEFS.define(
    "ParseExample",
    inputs=["serialized: string", "names: string", "sparse_keys: Nsparse * string", "dense_keys: Ndense * string",
            "dense_defaults: Tdense"],
    outputs=["sparse_indices: Nsparse * int64", "sparse_values: sparse_types", "sparse_shapes: Nsparse * int64",
             "dense_values: Tdense"],
    attrs=["Nsparse: int >= 0", "Ndense: int >= 0", f"sparse_types: {_TYPES}", f"Tdense: {_TYPES}",
           f"dense_shapes: {_SHAPES}"],
    grad=NOT_DIFFERENTIABLE,
    doc="Parses a vector (or scalar) of serialized Examples: one SparseTensor triple per sparse key, one dense "
        "tensor [batch] + dense_shape per dense key (an empty default: required; an unknown first dimension: "
        "padded to the longest with the default).")
PARSE_SINGLE_EXAMPLE = DEFS.define(
    "ParseSingleExample",
    inputs=["serialized: string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: num_sparse * int64", "dense_values: Tdense"],
    attrs=["num_sparse: int >= 0", "sparse_keys: list(string) >= 0", "dense_keys: list(string) >= 0",
           f"sparse_types: {_TYPES}", f"Tdense: {_TYPES}", f"dense_shapes: {_SHAPES}"],
    grad=NOT_DIFFERENTIABLE, doc="ParseExample of one serialized Example, the keys as attrs.")
PARSE_SINGLE_SEQUENCE_EXAMPLE = DEFS.define(
    "ParseSingleSequenceExample",
    inputs=["serialized: string", "feature_list_dense_missing_assumed_empty: string",
            "context_sparse_keys: Ncontext_sparse * string", "context_dense_keys: Ncontext_dense * string",
            "feature_list_sparse_keys: Nfeature_list_sparse * string",
            "feature_list_dense_keys: Nfeature_list_dense * string", "context_dense_defaults: Tcontext_dense",
            "debug_name: string"],
    outputs=["context_sparse_indices: Ncontext_sparse * int64", "context_sparse_values: context_sparse_types",
             "context_sparse_shapes: Ncontext_sparse * int64", "context_dense_values: Tcontext_dense",
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             "feature_list_sparse_values: feature_list_sparse_types",
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             "feature_list_dense_values: feature_list_dense_types"],
    attrs=["Ncontext_sparse: int >= 0 = 0", "Ncontext_dense: int >= 0 = 0", "Nfeature_list_sparse: int >= 0 = 0",
           "Nfeature_list_dense: int >= 0 = 0", f"context_sparse_types: {_TYPES} = []",
           f"Tcontext_dense: {_TYPES} = []", f"feature_list_dense_types: {_TYPES} = []",
           f"context_dense_shapes: {_SHAPES} = []", f"feature_list_sparse_types: {_TYPES} = []",
           f"feature_list_dense_shapes: {_SHAPES} = []"],
    grad=NOT_DIFFERENTIABLE,
    doc="Parses one serialized SequenceExample: its context as ParseSingleExample does, its feature lists into "
        "[steps] + shape dense tensors and [steps, values] SparseTensors.")


def _sparse_and_dense_shapes(batch, n_sparse, dense_shapes):
    rank = batch.ndims + 1
    return ([tensor_shape.TensorShape([None, rank])] * n_sparse + [tensor_shape.TensorShape([None])] * n_sparse
            + [tensor_shape.TensorShape([rank])] * n_sparse + [batch.concatenate(s) for s in dense_shapes])


@PARSE_EXAMPLE.set_shape_fn
def _parse_example_shape(op):
    serialized = op.inputs[0].shape
    if serialized.ndims is not None and serialized.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {serialized.ndims}: serialized is a vector of "
                         f"Examples (or one)")
    batch = serialized if serialized.ndims is not None else tensor_shape.TensorShape([None])
    return _sparse_and_dense_shapes(batch, op.get_attr("Nsparse"), op.get_attr("dense_shapes"))


@PARSE_SINGLE_EXAMPLE.set_shape_fn
def _parse_single_example_shape(op):
    op.inputs[0].shape.with_rank(0)
    return _sparse_and_dense_shapes(tensor_shape.TensorShape([]), op.get_attr("num_sparse"),
                                    op.get_attr("dense_shapes"))


@PARSE_SINGLE_SEQUENCE_EXAMPLE.set_shape_fn
def _parse_single_sequence_example_shape(op):
    op.inputs[0].shape.with_rank(0)
    steps = tensor_shape.TensorShape([None])
    return (_sparse_and_dense_shapes(tensor_shape.TensorShape([]), op.get_attr("Ncontext_sparse"),
                                     op.get_attr("context_dense_shapes"))
            + _sparse_and_dense_shapes(steps, op.get_attr("Nfeature_list_sparse"),
                                       op.get_attr("feature_list_dense_shapes")))


def _results(params, outputs):
    """{key: SparseTensor or dense Tensor} from the ops' flat outputs (indices, values, shapes, dense)."""
    n = len(params.sparse_keys)
    indices, values, shapes, dense = outputs[:n], outputs[n:2 * n], outputs[2 * n:3 * n], outputs[3 * n:]
    result = {key: SparseTensor(i, v, s) for key, i, v, s in zip(params.sparse_keys, indices, values, shapes)}
    result.update(zip(params.dense_keys, dense))
    return result


def _check_features(features):
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")


def _strings(values):
    return convert_to_tensor(values, dtype=dtypes.string)


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a vector of serialized Examples into a dict {key: Tensor or SparseTensor}, per ``features``
    ({key: FixedLenFeature, VarLenFeature or FixedLenSequenceFeature(allow_missing=True)})."""
    _check_features(features)
    params = features_to_raw_params(features, (VarLenFeature, FixedLenFeature, FixedLenSequenceFeature))
    with name_scope(name, "ParseExample"):
        defaults = dense_default_tensors(params)
        outputs = apply_op("ParseExample", [
            _strings(serialized), _strings([] if example_names is None else example_names),
            [_strings(k) for k in params.sparse_keys], [_strings(k) for k in params.dense_keys], defaults],
            {"sparse_types": params.sparse_types, "dense_shapes": params.dense_shapes}, name="ParseExample")
    return _results(params, outputs)


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized Example (a scalar string) into a dict {key: Tensor or SparseTensor}."""
    _check_features(features)
    params = features_to_raw_params(features, (VarLenFeature, FixedLenFeature, FixedLenSequenceFeature))
    serialized = _strings(serialized)
    if serialized.shape.ndims not in (None, 0):
        raise ValueError(f"Input serialized must be a scalar, got shape {serialized.shape}; use parse_example "
                         f"for a batch of Examples")
    with name_scope(name, "ParseSingleExample"):
        defaults = dense_default_tensors(params)
        if example_names is not None:  # TF's ParseSingleExample has no name input: parse a batch of none
            outputs = apply_op("ParseExample", [
                serialized, _strings(example_names), [_strings(k) for k in params.sparse_keys],
                [_strings(k) for k in params.dense_keys], defaults],
                {"sparse_types": params.sparse_types, "dense_shapes": params.dense_shapes}, name="ParseExample")
        else:
            outputs = apply_op("ParseSingleExample", [serialized, defaults], {
                "num_sparse": len(params.sparse_keys), "sparse_keys": params.sparse_keys,
                "dense_keys": params.dense_keys, "sparse_types": params.sparse_types,
                "dense_shapes": params.dense_shapes}, name="ParseSingleExample")
    return _results(params, outputs)


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None, example_name=None,
                                  name=None):
    """Parses one serialized SequenceExample: returns (context dict, feature-list dict). A FixedLenSequenceFeature
    becomes [steps] + shape (missing: an error unless allow_missing); a VarLenFeature a [steps, n] SparseTensor."""
    if not context_features and not sequence_features:
        raise ValueError("Both context_features and sequence_features are None, but at least one should have "
                         "values.")
    context = features_to_raw_params(context_features or {}, (VarLenFeature, FixedLenFeature),
                                     dense_param="context_dense_defaults", sparse_param="context_sparse_types")
    lists = features_to_raw_params(sequence_features or {}, (VarLenFeature, FixedLenSequenceFeature), sequence=True,
                                   dense_param="feature_list_dense_types", sparse_param="feature_list_sparse_types")
    for key, default in zip(lists.dense_keys, lists.dense_defaults):
        if default is not None:
            raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None: a missing feature list is an "
                             f"error, or empty with allow_missing=True")
    missing_ok = [k for k in lists.dense_keys if sequence_features[k].allow_missing]
    serialized = _strings(serialized)
    if serialized.shape.ndims not in (None, 0):
        raise ValueError(f"Input serialized must be a scalar, got shape {serialized.shape}")
    with name_scope(name, "ParseSingleSequenceExample"):
        outputs = apply_op("ParseSingleSequenceExample", [
            serialized, _strings(missing_ok), [_strings(k) for k in context.sparse_keys],
            [_strings(k) for k in context.dense_keys], [_strings(k) for k in lists.sparse_keys],
            [_strings(k) for k in lists.dense_keys], dense_default_tensors(context),
            _strings("" if example_name is None else example_name)], {
            "context_sparse_types": context.sparse_types, "context_dense_shapes": context.dense_shapes,
            "feature_list_sparse_types": lists.sparse_types, "feature_list_dense_types": lists.dense_types,
            "feature_list_dense_shapes": lists.dense_shapes}, name="ParseSingleSequenceExample")
    n = 3 * len(context.sparse_keys) + len(context.dense_keys)
    return _results(context, outputs[:n]), _results(lists, outputs[n:])

