"""``tf.estimator.inputs.numpy_input_fn``: an input_fn over numpy arrays (or a dict of them).

TF 1.15 feeds them through a queue and queue runners; here they go through ``tf.data`` (a one-shot iterator),
which gives the same batches in the same order (unshuffled), the last one partial when ``num_epochs`` is set
and only whole batches when it repeats forever."""

import collections

import numpy as np

from tensorweave.data.dataset_ops import Dataset

__all__ = ["numpy_input_fn"]


def _ordered_features(x):
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        return collections.OrderedDict(sorted(x.items(), key=lambda t: t[0]))
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError("x cannot be an empty array")
        return collections.OrderedDict({"__direct_np_input__": x})
    raise TypeError(f"x must be a dict or array; got {type(x).__name__}")


def _unique_target_key(features):
    target_key = "__target_key__"
    while target_key in features:
        target_key += "_n"
    return target_key


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """An input_fn returning (features, labels) batches of ``x`` and ``y`` (features alone without ``y``)."""
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (it is recommended to set it as "
                         f"True for training); got {shuffle}")

    def input_fn():
        data = _ordered_features(x)
        feature_keys = list(data.keys())
        if y is None:
            target_keys = None
        elif isinstance(y, dict):
            if not y:
                raise ValueError("y cannot be empty dict, use None instead.")
            ordered_y = collections.OrderedDict(sorted(y.items(), key=lambda t: t[0]))
            target_keys = list(ordered_y.keys())
            duplicates = set(feature_keys) & set(target_keys)
            if duplicates:
                raise ValueError(f"{len(duplicates)} duplicate keys are found in both x and y: {duplicates}")
            data.update(ordered_y)
        else:
            target_keys = _unique_target_key(data)
            data[target_keys] = y
        if len({np.shape(v)[0] for v in data.values()}) != 1:
            x_shapes = {k: np.shape(data[k]) for k in feature_keys}
            if target_keys is None:
                y_shapes = None
            elif isinstance(target_keys, str):
                y_shapes = np.shape(y)
            else:
                y_shapes = {k: np.shape(data[k]) for k in target_keys}
            raise ValueError(f"Length of tensors in x and y is mismatched. All elements in x and y must have the same "
                             f"length.\nShapes in x: {x_shapes}\nShapes in y: {y_shapes}\n")
        dataset = Dataset.from_tensor_slices(tuple(np.asarray(v) for v in data.values()))
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs).batch(batch_size, drop_remainder=num_epochs is None)
        batch = list(dataset.make_one_shot_iterator().get_next())
        if isinstance(x, np.ndarray):
            features = batch[0]
        else:
            features = dict(zip(feature_keys, batch[:len(feature_keys)]))
        if target_keys is None:
            return features
        if isinstance(target_keys, str):
            return features, batch[-1]
        return features, dict(zip(target_keys, batch[-len(target_keys):]))

    return input_fn
