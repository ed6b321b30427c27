"""contrib.layers' (and slim's) layer functions, built on tf.layers as TF 1.15's contrib builds them, with contrib's
variable names: ``fully_connected/weights`` and ``/biases``, ``Conv/weights``, ``BatchNorm/beta`` and
``/moving_mean``, ``LayerNorm/gamma``, ``EmbedSequence/embeddings``. Every variable they make is a model
variable (``GraphKeys.MODEL_VARIABLES``, what ``slim.get_model_variables()`` returns), and each function takes
its defaults from an enclosing ``arg_scope``.
"""

from tensorweave import dtypes
from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.framework.variables import model_variable
from tensorweave.contrib.layers.initializers import xavier_initializer
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.layers import convolutional, core, normalization
from tensorweave.ops import (
    array_ops, embedding_ops, init_ops, mask_ops, nn_ops, normalization_ops, pooling_ops, shape_ops, unary_math_ops,
    variable_scope as vs,
)

__all__ = ["avg_pool2d", "batch_norm", "conv2d", "convolution", "convolution2d", "dropout", "embed_sequence",
           "flatten", "fully_connected", "layer_norm", "linear", "max_pool2d", "one_hot_encoding", "relu", "repeat",
           "stack"]


def _model_variable_getter(rename=None):
    """A custom getter that makes the tf.layers variables model variables, renamed as contrib names them."""
    def getter(getter, name, *args, collections=None, **kwargs):
        parts = name.split("/")
        parts[-1] = (rename or {}).get(parts[-1], parts[-1])
        collections = list(dict.fromkeys(list(collections or []) + [GraphKeys.GLOBAL_VARIABLES,
                                                                      GraphKeys.MODEL_VARIABLES]))
        return getter("/".join(parts), *args, collections=collections, **kwargs)
    return getter


_WEIGHTS_AND_BIASES = {"kernel": "weights", "bias": "biases"}


def _add_to_collections(variable, collections_set, key):
    """``variables_collections`` is a list of collections for every variable, or a dict keyed by variable kind."""
    collections = _collections(collections_set, key)
    for collection in [collections] if isinstance(collections, str) else collections or ():
        if variable not in graph_mod.get_collection(collection):
            graph_mod.add_to_collection(collection, variable)


def _collect_outputs(collections, outputs):
    if collections:
        graph_mod.add_to_collections(collections, outputs)
    return outputs


def _finish(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections):
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return _collect_outputs(outputs_collections, outputs)


def _add_layer_variables(layer, variables_collections):
    _add_to_collections(layer.kernel, variables_collections, "weights")
    if layer.bias is not None:
        _add_to_collections(layer.bias, variables_collections, "biases")


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                    weights_initializer=xavier_initializer(), weights_regularizer=None,
                    biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None, reuse=None,
                    variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """``activation_fn(normalizer_fn(inputs @ weights + biases))``; no biases when there is a normalizer."""
    if not isinstance(num_outputs, int):
        raise ValueError(f"num_outputs should be an int, got {num_outputs!r}")
    with vs.variable_scope(scope, "fully_connected", [inputs], reuse=reuse,
                           custom_getter=_model_variable_getter(_WEIGHTS_AND_BIASES)) as sc:
        inputs = convert_to_tensor(inputs)
        layer = core.Dense(num_outputs, None, bool(not normalizer_fn and biases_initializer), weights_initializer,
                           biases_initializer, weights_regularizer, biases_regularizer, trainable=trainable,
                           name=sc.name, dtype=inputs.dtype.base_dtype, _scope=sc, _reuse=reuse)
        outputs = layer(inputs)
        _add_layer_variables(layer, variables_collections)
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections)


_CONV_CLASSES = {3: convolutional.Conv1D, 4: core.Conv2D}


@add_arg_scope
def convolution(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
                activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                weights_initializer=xavier_initializer(), weights_regularizer=None,
                biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None, reuse=None,
                variables_collections=None, outputs_collections=None, trainable=True, scope=None, conv_dims=None):
    """An N-D convolution layer (N from the input's rank: 3, 4 or 5), variables ``Conv/weights`` and
    ``Conv/biases``; ``rate`` dilates, ``data_format`` is "NWC"/"NHWC"/"NDHWC" or channels-first."""
    if data_format not in (None, "NWC", "NCW", "NHWC", "NCHW", "NDHWC", "NCDHW"):
        raise ValueError(f"Invalid data_format: {data_format!r}")
    with vs.variable_scope(scope, "Conv", [inputs], reuse=reuse,
                           custom_getter=_model_variable_getter(_WEIGHTS_AND_BIASES)) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if conv_dims is not None and conv_dims + 2 != rank:
            raise ValueError(f"Convolution expects input with rank {conv_dims + 2}, got {rank}")
        if rank not in _conv_classes():
            raise ValueError(f"Convolution not supported for input with rank {rank} (input {inputs.name})")
        channels = "channels_first" if data_format and data_format.startswith("NC") else "channels_last"
        layer = _conv_classes()[rank](
            num_outputs, kernel_size, stride, padding, channels, rate, None,
            bool(not normalizer_fn and biases_initializer), weights_initializer, biases_initializer,
            weights_regularizer, biases_regularizer, None, None, None, trainable, sc.name,
            dtype=inputs.dtype.base_dtype, _scope=sc, _reuse=reuse)
        outputs = layer(inputs)
        _add_layer_variables(layer, variables_collections)
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections)


def _conv_classes():
    classes = dict(_CONV_CLASSES)
    conv3d = getattr(convolutional, "Conv3D", None)
    if conv3d is not None:
        classes[5] = conv3d
    return classes


@add_arg_scope
def convolution2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
                  activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                  weights_initializer=xavier_initializer(), weights_regularizer=None,
                  biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None, reuse=None,
                  variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """``convolution`` of a 4-D input (slim's and contrib's ``conv2d``)."""
    return convolution(inputs, num_outputs, kernel_size, stride, padding, data_format, rate, activation_fn,
                       normalizer_fn, normalizer_params, weights_initializer, weights_regularizer,
                       biases_initializer, biases_regularizer, reuse, variables_collections, outputs_collections,
                       trainable, scope, conv_dims=2)


conv2d = convolution2d


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """[batch, ...] -> [batch, k] (ops under the "Flatten" name scope)."""
    with graph_mod.name_scope(scope, "Flatten", [inputs]):
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is None or inputs.shape.ndims < 2:
            raise ValueError(f"Inputs must have a least 2 dimensions, got shape {inputs.shape} ({inputs.name})")
        return _collect_outputs(outputs_collections, core.flatten(inputs))


@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0, outputs_collections=None, scope=None):
    """``tf.one_hot`` of ``labels`` (int32 labels as int64, as contrib does) under the "OneHotEncoding" scope; float32
    unless ``on_value``/``off_value`` say otherwise."""
    with graph_mod.name_scope(scope, "OneHotEncoding", [labels, num_classes]):
        labels = convert_to_tensor(labels)
        if labels.dtype == dtypes.int32:
            labels = unary_math_ops.to_int64(labels)
        return _collect_outputs(outputs_collections,
                                mask_ops.one_hot(labels, num_classes, on_value=on_value, off_value=off_value))


def _pool(op, default_name, inputs, kernel_size, stride, padding, data_format, outputs_collections, scope):
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format!r}")
    kernel, strides = core._pair(kernel_size, "kernel_size"), core._pair(stride, "stride")
    with graph_mod.name_scope(scope, default_name, [inputs]):
        inputs = convert_to_tensor(inputs)
        outputs = op(inputs, list(kernel), list(strides), core._padding(padding), data_format=data_format)
        return _collect_outputs(outputs_collections, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
               scope=None):
    return _pool(pooling_ops.max_pool, "MaxPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
               scope=None):
    return _pool(pooling_ops.avg_pool, "AvgPool2D", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None, scope=None,
            seed=None):
    """Keeps each element with probability ``keep_prob`` (scaled by 1 / keep_prob) while ``is_training`` (a bool or
    a bool tensor); the identity otherwise."""
    with vs.variable_scope(scope, "Dropout", [inputs], custom_getter=_model_variable_getter()) as sc:
        layer = core.Dropout(rate=1 - keep_prob, noise_shape=noise_shape, seed=seed, name=sc.name, _scope=sc)
        return _collect_outputs(outputs_collections, layer(inputs, training=is_training))


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None, variables_collections=None,
               outputs_collections=None, trainable=True, begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Normalizes over axes ``begin_norm_axis:`` with the mean and variance of each example (epsilon 1e-12),
    then scales by ``gamma`` and shifts by ``beta`` (shaped ``inputs.shape[begin_params_axis:]``)."""
    with vs.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse):
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        dtype = inputs.dtype.base_dtype
        begin_norm_axis = begin_norm_axis + rank if begin_norm_axis < 0 else begin_norm_axis
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis ({begin_norm_axis}) "
                             f"must be < rank(inputs) ({rank})")
        params_shape = inputs.shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name}: shape[{begin_params_axis}:] is not fully defined: {params_shape}")
        beta = gamma = None
        if center:
            beta = model_variable("beta", params_shape, dtype, init_ops.zeros_initializer(), trainable=trainable,
                                  collections=_collections(variables_collections, "beta"))
        if scale:
            gamma = model_variable("gamma", params_shape, dtype, init_ops.ones_initializer(), trainable=trainable,
                                   collections=_collections(variables_collections, "gamma"))
        mean, variance = normalization_ops.moments(inputs, list(range(begin_norm_axis, rank)), keep_dims=True)
        epsilon = 1e-3 if dtype == dtypes.float16 else 1e-12
        outputs = normalization_ops.batch_normalization(inputs, mean, variance, beta, gamma, epsilon)
        outputs.set_shape(inputs.shape)
        return _finish(outputs, None, None, activation_fn, outputs_collections)


def _collections(collections_set, key):
    return collections_set.get(key) if isinstance(collections_set, dict) else collections_set


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None, updates_collections=GraphKeys.UPDATE_OPS,
               is_training=True, reuse=None, variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC", zero_debias_moving_mean=False, scope=None,
               renorm=False, renorm_clipping=None, renorm_decay=0.99, adjustment=None):
    """Batch normalization over all axes but the channels (``data_format``'s), variables ``BatchNorm/beta``,
    (``gamma`` with ``scale=True``), ``moving_mean`` and ``moving_variance``.

    The moving averages' update ops go to ``updates_collections``; with ``updates_collections=None`` they run
    before the output is produced instead (as TF1). Moving variances of 4-D inputs, and of 2-D ones when the
    updates do not go to UPDATE_OPS (TF's fused path), are updated with Bessel's correction, as TF's.
    """
    for argument, value in (("batch_weights", batch_weights), ("zero_debias_moving_mean", zero_debias_moving_mean)):
        if value not in (None, False):
            raise ValueError(f"batch_norm({argument}=...) is not supported; leave {argument} at its default")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format!r}")
    inputs = convert_to_tensor(inputs)
    rank = inputs.shape.ndims
    initializers, regularizers = param_initializers or {}, param_regularizers or {}
    with vs.variable_scope(scope, "BatchNorm", [inputs], reuse=reuse,
                           custom_getter=_model_variable_getter()) as sc:
        # TF's fused kernel serves 2-D inputs as [N, 1, 1, C] when the updates are not UPDATE_OPS'
        as_4d = rank == 2 and fused is not False and updates_collections != GraphKeys.UPDATE_OPS
        layer = normalization.BatchNormalization(
            axis=1 if data_format == "NCHW" else -1, momentum=decay, epsilon=epsilon, center=center, scale=scale,
            beta_initializer=initializers.get("beta", init_ops.zeros_initializer()),
            gamma_initializer=initializers.get("gamma", init_ops.ones_initializer()),
            moving_mean_initializer=initializers.get("moving_mean", init_ops.zeros_initializer()),
            moving_variance_initializer=initializers.get("moving_variance", init_ops.ones_initializer()),
            beta_regularizer=regularizers.get("beta"), gamma_regularizer=regularizers.get("gamma"),
            renorm=renorm, fused=fused, trainable=trainable, adjustment=adjustment, name=sc.name, _scope=sc,
            _reuse=reuse)
        layer_inputs = shape_ops.reshape(inputs, [-1, 1, 1, inputs.shape[-1].value]) if as_4d else inputs
        outputs = layer(layer_inputs, training=is_training)
        if as_4d:
            outputs = shape_ops.reshape(outputs, shape_ops.shape(inputs))
            outputs.set_shape(inputs.shape)
        if updates_collections != GraphKeys.UPDATE_OPS and layer.updates:
            ref = graph_mod.get_collection_ref(GraphKeys.UPDATE_OPS)
            ref[:] = [op for op in ref if all(op is not u for u in layer.updates)]
            if updates_collections is None:
                with graph_mod.control_dependencies(layer.updates):
                    outputs = array_ops.identity(outputs)
            else:
                for update in layer.updates:
                    graph_mod.add_to_collections(updates_collections, update)
        for variable, key in ((layer.moving_mean, "moving_mean"), (layer.moving_variance, "moving_variance"),
                              (layer.beta, "beta"), (layer.gamma, "gamma")):
            if variable is not None:
                _add_to_collections(variable, variables_collections, key)
        return _finish(outputs, None, None, activation_fn, outputs_collections)


@add_arg_scope
def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None, regularizer=None,
                   trainable=True, scope=None, reuse=None):
    """Looks ``ids`` up in a ``[vocab_size, embed_dim]`` model variable ``EmbedSequence/embeddings``."""
    if vocab_size is None or embed_dim is None:
        raise ValueError("Must specify vocab size and embedding dimension")
    with vs.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        embeddings = model_variable("embeddings", shape=[vocab_size, embed_dim], initializer=initializer,
                                    regularizer=regularizer, trainable=trainable)
        return embedding_ops.embedding_lookup(embeddings, ids)


def _scope_name(layer):
    if hasattr(layer, "__name__"):
        return layer.__name__
    if hasattr(layer, "func") and hasattr(layer.func, "__name__"):
        return layer.func.__name__
    return None


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """``layer`` applied ``repetitions`` times, each in scope ``<scope>/<scope>_<i>`` (from 1)."""
    scope = kwargs.pop("scope", None)
    with vs.variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _scope_name(layer) or "repeat"
        for i in range(repetitions):
            kwargs["scope"] = f"{scope}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """``layer`` applied once per entry of ``stack_args`` (its positional arguments, or one), each in scope
    ``<scope>/<scope>_<i>``: ``stack(x, fully_connected, [32, 64])`` is two layers of 32 and 64 units."""
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError(f"stack_args need to be a list or tuple, got {stack_args!r}")
    with vs.variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _scope_name(layer) or "stack"
        for i, args in enumerate(stack_args):
            kwargs["scope"] = f"{scope}_{i + 1}"
            outputs = layer(outputs, *(args if isinstance(args, (list, tuple)) else [args]), **kwargs)
        return outputs


def linear(inputs, num_outputs, **kwargs):
    """``fully_connected`` with no activation."""
    return fully_connected(inputs, num_outputs, activation_fn=None, **kwargs)


def relu(inputs, num_outputs, **kwargs):
    return fully_connected(inputs, num_outputs, activation_fn=nn_ops.relu, **kwargs)
