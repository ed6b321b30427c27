"""Slicing, indexing, gather/scatter, one_hot and masks while building graphs (no kernels needed): static shapes,
dtypes, constant folding and build-time errors."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_util import constant_value


def ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


KEYS = [
    (1,), (-1,), (slice(None),), (slice(1, None),), (slice(None, None, -1),), (slice(5, -100, -2),),
    (slice(-2, None), 0), (Ellipsis, 1), (None, Ellipsis, None), (1, None, slice(None, None, 2), -1),
    (slice(10, 20),), (slice(3, 1),), (slice(None), slice(None), slice(None)), (Ellipsis,), (),
    (0, 0, 0), (slice(1, 3), Ellipsis, slice(None, 1)), (None,), (slice(None, None, 3), None, 2),
]


@pytest.mark.parametrize("key", KEYS, ids=str)
def test_indexing_shapes_match_numpy(key):
    data = np.empty((4, 3, 5))
    assert ph([4, 3, 5])[key].shape.as_list() == list(data[key].shape)


@pytest.mark.parametrize("key, expected", [
    ((slice(None), 0), [None]), ((0,), [5]), ((Ellipsis, None), [None, 5, 1]), ((slice(1, 3),), [None, 5]),
    ((slice(None, None, -1), slice(None, None, 2)), [None, 3]), ((None, -1, slice(4, None)), [1, 1]),
])
def test_indexing_with_an_unknown_dimension(key, expected):
    assert ph([None, 5])[key].shape.as_list() == expected


def test_indexing_a_tensor_of_unknown_rank_has_unknown_shape():
    assert ph(None)[0, 1:].shape.ndims is None


def test_scalar_tensor_indices_keep_every_static_dimension_they_can():
    x, i = ph([3, 4, 5]), tf.placeholder(tf.int32, [])
    assert x[i].shape.as_list() == [4, 5]
    assert x[i, 1:3].shape.as_list() == [2, 5]
    assert x[1:i, ..., 0].shape.as_list() == [None, 4]
    assert x[tf.constant(1, tf.int64), 2:].shape.as_list() == [2, 5]
    assert x[i].op.inputs[1].dtype == tf.int32 and x[tf.constant(1, tf.int64)].op.inputs[1].dtype == tf.int64


def test_newaxis_is_none():
    assert tf.newaxis is None
    assert ph([2, 3])[:, tf.newaxis].shape.as_list() == [2, 1, 3]


def test_constant_keys_become_constant_vectors_and_masks():
    op = ph([4, 3, 5])[1:, ..., tf.newaxis, 0].op
    assert op.type == "StridedSlice"
    assert [constant_value(t).tolist() for t in op.inputs[1:]] == [[1, 0, 0, 0], [0, 0, 0, 1], [1, 1, 1, 1]]
    assert (op.get_attr("begin_mask"), op.get_attr("end_mask"), op.get_attr("ellipsis_mask"),
            op.get_attr("new_axis_mask"), op.get_attr("shrink_axis_mask")) == (0, 1, 2, 4, 8)


@pytest.mark.parametrize("args, masks, expected", [
    (([1, 0], [3, 0], [1, 1]), {"end_mask": 2}, [2, 3, 5]),
    (([0, 2], [0, 0], [1, -1]), {"begin_mask": 1, "end_mask": 3}, [4, 3, 5]),
    (([0, 1], [0, 2], [1, 1]), {"ellipsis_mask": 1, "shrink_axis_mask": 2}, [4, 3]),
    (([0, 0, 1], [0, 0, 2], [1, 1, 1]), {"new_axis_mask": 1, "ellipsis_mask": 2}, [1, 4, 3, 1]),
    (([2], [1], [1]), {"shrink_axis_mask": 1, "begin_mask": 1}, [3, 5]),
    (([-1, 0], [-5, 0], [-2, 1]), {"new_axis_mask": 2}, [2, 1, 3, 5]),
])
def test_strided_slice_masks(args, masks, expected):
    assert tf.strided_slice(ph([4, 3, 5]), *args, **masks).shape.as_list() == expected


def test_strided_slice_with_run_time_bounds_knows_the_rank():
    b = tf.placeholder(tf.int32, [2])
    assert tf.strided_slice(ph([4, 3]), b, b, [1, 1]).shape.as_list() == [None, None]
    assert tf.strided_slice(ph([4, 3]), b, b, [1, 1], begin_mask=2, end_mask=2).shape.as_list() == [None, 3]
    assert tf.strided_slice(ph([4, 3]), b, b, [1, 1], shrink_axis_mask=1).shape.as_list() == [None]


@pytest.mark.parametrize("key, message", [
    ((4,), "index 4 is out of range for dimension 0 of size 4"),
    ((0, -4), "index -4 is out of range for dimension 1 of size 3"),
    ((0, 0, 0, 0), "indexes 4 dimensions, but the tensor has only 3"),
    ((slice(None, None, 0),), "non-zero step"),
    ((Ellipsis, 0, Ellipsis), "one ellipsis"),
])
def test_bad_keys_fail_while_building(key, message):
    with pytest.raises(ValueError, match=message):
        ph([4, 3, 5])[key]


def test_build_errors_name_the_op_and_the_users_line():
    with pytest.raises(ValueError) as info:
        ph([4, 3])[:, 7]
    assert "StridedSlice" in str(info.value) and "test_slicing_gather_shapes.py" in str(info.value)


def test_strided_slice_spec_errors():
    x = ph([4, 3])
    with pytest.raises(ValueError, match="strides\\[0\\] is 0"):
        tf.strided_slice(x, [0], [1], [0])
    with pytest.raises(ValueError, match="one length"):
        tf.strided_slice(x, [0, 0], [1], [1])
    with pytest.raises(ValueError, match="positive stride"):
        tf.strided_slice(x, [1], [2], [-1], shrink_axis_mask=1)


@pytest.mark.parametrize("key, hint", [
    ([0, 2], "tf.gather"), (np.array([1, 2]), "tf.gather"), ((slice(None), [True, False]), "tf.boolean_mask"),
    (np.array([True, False, True, True]), "tf.boolean_mask"), (1.5, "tf.cast"), ("a", "tf.cast"),
    (True, "tf.boolean_mask"), (slice(0.5, 2), "tf.cast"),
])
def test_unsupported_keys_are_type_errors_that_say_what_to_use(key, hint):
    with pytest.raises(TypeError, match="Only integers, slices") as info:
        ph([4, 3])[key]
    assert hint in str(info.value)


def test_tensor_keys_must_be_scalar_ints():
    x = ph([4, 3])
    with pytest.raises(TypeError, match="tf.gather"):
        x[tf.constant([0, 1])]
    with pytest.raises(TypeError, match="tf.boolean_mask"):
        x[tf.constant([True, False, True, False])]
    with pytest.raises(TypeError, match="tf.cast"):
        x[tf.constant(1.0)]


def test_indexing_folds_constants():
    assert constant_value(tf.shape(ph([3, 7, 2]))[1:]).tolist() == [7, 2]
    folded = constant_value(tf.constant([[1, 2, 3], [4, 5, 6]])[:, ::-2])
    assert folded.tolist() == [[3, 1], [6, 4]]
    assert constant_value(tf.slice(tf.constant([1, 2, 3, 4]), [1], [-1])).tolist() == [2, 3, 4]


# ---- Slice ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, begin, size, expected", [
    ([4, 5], [1, 2], [2, -1], [2, 3]), ([4, 5], [0, 0], [4, 5], [4, 5]), ([None, 5], [1, 1], [-1, 2], [None, 2]),
    ([None, 5], [0, 0], [3, 0], [3, 0]), ([], [], [], []),
])
def test_slice_shapes(shape, begin, size, expected):
    assert tf.slice(ph(shape), begin, size).shape.as_list() == expected


def test_slice_with_run_time_begin_keeps_known_sizes():
    begin = tf.placeholder(tf.int32, [2])
    assert tf.slice(ph([4, 5]), begin, [2, -1]).shape.as_list() == [2, None]
    assert tf.slice(ph([4, 5]), [1, 1], tf.placeholder(tf.int32, [2])).shape.as_list() == [None, None]


@pytest.mark.parametrize("begin, size", [([3, 0], [2, 5]), ([0, 6], [1, -1]), ([-1, 0], [1, 1]), ([0, 0], [1, -2])])
def test_slice_out_of_range_fails_while_building(begin, size):
    with pytest.raises(ValueError, match="do not fit the input's shape"):
        tf.slice(ph([4, 5]), begin, size)


def test_slice_needs_one_entry_per_dimension():
    with pytest.raises(ValueError, match="one entry per dimension"):
        tf.slice(ph([4, 5]), [0], [1])


# ---- gather -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, indices, axis, batch_dims, expected", [
    ([5, 3], [2], 0, 0, [2, 3]), ([5, 3], [2, 4], 0, 0, [2, 4, 3]), ([5, 3], [], 0, 0, [3]),
    ([5, 3, 2], [7], 1, 0, [5, 7, 2]), ([5, 3, 2], [7, 1], -1, 0, [5, 3, 7, 1]),
    ([4, 3, 2], [4, 6], 1, 1, [4, 6, 2]), ([4, 3, 2, 5], [4, 6], 2, 1, [4, 3, 6, 5]),
    ([4, 3, 2], [4, 6], 1, -1, [4, 6, 2]), ([None, 3], [None], 0, 0, [None, 3]),
    ([None, 3], [4, 2], 1, 0, [None, 4, 2]), ([4, None, 2], [None, 6], 1, 1, [4, 6, 2]),
])
def test_gather_shapes(params, indices, axis, batch_dims, expected):
    out = tf.gather(ph(params), tf.placeholder(tf.int32, indices), axis=axis, batch_dims=batch_dims)
    assert out.shape.as_list() == expected


def test_gather_defaults_to_the_first_non_batch_axis():
    assert tf.gather(ph([4, 3, 2]), tf.placeholder(tf.int64, [4, 6]), batch_dims=1).shape.as_list() == [4, 6, 2]


def test_gather_with_a_run_time_axis_knows_the_rank():
    axis = tf.placeholder(tf.int32, [])
    assert tf.gather(ph([4, 3, 2]), tf.placeholder(tf.int32, [5]), axis=axis).shape.as_list() == [None] * 3


def test_gather_keeps_the_params_dtype():
    for dtype in (tf.float16, tf.int64, tf.bool, tf.string):
        assert tf.gather(ph([3], dtype), [0, 1]).dtype == dtype


@pytest.mark.parametrize("params, indices, kwargs, message", [
    ([4, 3], [2], {"axis": 2}, "axis 2 is out of range for params of rank 2"),
    ([4, 3], [2], {"axis": -3}, "out of range"),
    ([], [2], {}, "at least 1-D"),
    ([4, 3, 2], [4, 5], {"axis": 0, "batch_dims": 1}, "batch_dims \\(1\\) must be less than or equal to axis"),
    ([4, 3, 2], [5, 5], {"axis": 1, "batch_dims": 1}, "must match"),
    ([4, 3, 2], [4], {"axis": 2, "batch_dims": 2}, "at most the rank of indices"),
])
def test_gather_shape_errors(params, indices, kwargs, message):
    with pytest.raises(ValueError, match=message):
        tf.gather(ph(params), tf.placeholder(tf.int32, indices), **kwargs)


def test_gather_refuses_float_indices():
    with pytest.raises(TypeError, match="float32"):
        tf.gather(ph([4]), ph([2]))


def test_gather_of_constants_folds():
    assert constant_value(tf.gather(tf.constant([10, 20, 30]), [2, 0])).tolist() == [30, 10]


def test_gather_on_axis_0_has_an_indexed_slices_gradient():
    params, indices = ph([10, 4]), tf.placeholder(tf.int32, [2, 3])
    grad = tf.gradients(tf.gather(params, indices), params)[0]
    assert isinstance(grad, tf.IndexedSlices)
    assert grad.values.shape.as_list() == [6, 4] and grad.indices.shape.as_list() == [6]
    assert constant_value(grad.dense_shape).tolist() == [10, 4]


def test_gather_on_other_axes_has_a_dense_gradient_of_the_params_shape():
    params = ph([5, 3, 2])
    for kwargs in ({"axis": 1}, {"axis": 2}, {"axis": 1, "batch_dims": 1}):
        indices = [[0, 2], [1, 1], [0, 0], [2, 1], [1, 0]] if kwargs.get("batch_dims") else [[1, 0]]
        grad = tf.gradients(tf.gather(params, indices, **kwargs), params)[0]
        assert isinstance(grad, tf.Tensor) and grad.shape.as_list() == [5, 3, 2]


# ---- gather_nd / scatter_nd -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, indices, expected", [
    ([4, 3, 5], [6, 2], [6, 5]), ([4, 3, 5], [6, 3], [6]), ([4, 3, 5], [2, 7, 1], [2, 7, 3, 5]),
    ([4, 3], [0], [4, 3]), ([None, 3, 5], [None, 2], [None, 5]), ([4, 3], [5, None], [5, None]),
])
def test_gather_nd_shapes(params, indices, expected):
    out = tf.gather_nd(ph(params), tf.placeholder(tf.int32, indices))
    assert out.shape.as_list() == expected if None not in indices[-1:] else out.shape.ndims is None


def test_gather_nd_with_batch_dims_shape():
    out = tf.gather_nd(ph([4, 3, 5]), tf.placeholder(tf.int32, [4, 6, 1]), batch_dims=1)
    assert out.shape.as_list() == [4, 6, 5]


def test_gather_nd_index_vectors_longer_than_the_rank_fail():
    with pytest.raises(ValueError, match="length 3 .* cannot index params of rank 2"):
        tf.gather_nd(ph([4, 3]), tf.placeholder(tf.int32, [2, 3]))


def test_scatter_nd_shapes_and_errors():
    out = tf.scatter_nd(tf.placeholder(tf.int32, [6, 1]), ph([6, 5]), [4, 5])
    assert out.shape.as_list() == [4, 5]
    shape = tf.placeholder(tf.int32, [2])
    assert tf.scatter_nd(tf.placeholder(tf.int32, [6, 1]), ph([6, 5]), shape).shape.as_list() == [None, 5]
    with pytest.raises(ValueError, match="updates must have shape"):
        tf.scatter_nd(tf.placeholder(tf.int32, [6, 1]), ph([6, 4]), [4, 5])
    assert tf.gradients(tf.scatter_nd([[1]], ph([1, 5]), [4, 5]), ph([1, 5]))[0] is None


# ---- one_hot, masks, unique, where ------------------------------------------------------------------------------------
@pytest.mark.parametrize("indices, axis, expected", [
    ([3], None, [3, 4]), ([3], 0, [4, 3]), ([2, 3], 1, [2, 4, 3]), ([2, 3], -1, [2, 3, 4]), ([], None, [4]),
    ([None, 3], 0, [4, None, 3]),
])
def test_one_hot_shapes(indices, axis, expected):
    assert tf.one_hot(tf.placeholder(tf.int32, indices), 4, axis=axis).shape.as_list() == expected


def test_one_hot_dtypes():
    indices = tf.placeholder(tf.int64, [3])
    assert tf.one_hot(indices, 4).dtype == tf.float32
    assert tf.one_hot(indices, 4, dtype=tf.int32).dtype == tf.int32
    assert tf.one_hot(indices, 4, on_value=tf.constant(2.0, tf.float64)).dtype == tf.float64
    assert tf.one_hot(indices, 4, on_value=5, off_value=-1).dtype == tf.int32
    assert tf.one_hot(indices, 4, on_value=1, dtype=tf.float16).dtype == tf.float16
    assert tf.one_hot(indices, 4, on_value=b"yes", off_value=b"no").dtype == tf.string
    with pytest.raises(TypeError, match="does not match dtype=float32"):
        tf.one_hot(indices, 4, on_value=tf.constant(1, tf.int32), dtype=tf.float32)
    with pytest.raises(TypeError, match="one dtype"):
        tf.one_hot(indices, 4, on_value=tf.constant(1.0), off_value=tf.constant(0, tf.int32))


def test_one_hot_errors():
    with pytest.raises(ValueError, match="axis must be -1 or in \\[0, 1\\]"):
        tf.one_hot(tf.placeholder(tf.int32, [3]), 4, axis=3)
    with pytest.raises(ValueError, match="depth must be non-negative"):
        tf.one_hot([1], -2)
    with pytest.raises(ValueError, match="on_value must be a scalar"):
        tf.one_hot([1], 2, on_value=tf.constant([1.0, 2.0]))


@pytest.mark.parametrize("tensor, mask, axis, expected", [
    ([5, 3], [5], None, [None, 3]), ([5, 3, 2], [5, 3], None, [None, 2]), ([4, 5, 3], [5], 1, [4, None, 3]),
    ([None, 3], [None], None, [None, 3]), ([4, 5, 3], [3], -1, [4, 5, None]),
])
def test_boolean_mask_shapes(tensor, mask, axis, expected):
    out = tf.boolean_mask(ph(tensor), tf.placeholder(tf.bool, mask), axis=axis)
    assert out.shape.as_list() == expected


def test_boolean_mask_errors():
    with pytest.raises(ValueError, match="cannot be a scalar"):
        tf.boolean_mask(ph([3]), True)
    with pytest.raises(ValueError, match="rank must be known"):
        tf.boolean_mask(ph([3]), tf.placeholder(tf.bool, None))
    with pytest.raises(ValueError, match="does not match"):
        tf.boolean_mask(ph([3, 2]), tf.placeholder(tf.bool, [2]))
    with pytest.raises(ValueError, match="rank at least 3"):
        tf.boolean_mask(ph([3, 2]), tf.placeholder(tf.bool, [2, 2]), axis=1)


def test_sequence_mask_shapes_and_dtypes():
    lengths = tf.placeholder(tf.int32, [3])
    assert tf.sequence_mask(lengths, 5).shape.as_list() == [3, 5]
    assert tf.sequence_mask(lengths, 5).dtype == tf.bool
    assert tf.sequence_mask(lengths).shape.as_list() == [3, None]
    assert tf.sequence_mask(tf.placeholder(tf.int64, [2, 4]), 3, dtype=tf.float32).shape.as_list() == [2, 4, 3]
    assert tf.sequence_mask(lengths, 5, dtype=tf.float32).dtype == tf.float32
    with pytest.raises(ValueError, match="maxlen must be a scalar"):
        tf.sequence_mask(lengths, [5])


def test_unique_shapes_and_dtypes():
    y, idx = tf.unique(tf.placeholder(tf.string, [7]))
    assert y.dtype == tf.string and idx.dtype == tf.int32 and y.shape.as_list() == [None] and idx.shape.as_list() == [7]
    y, idx, count = tf.unique_with_counts(ph([None]), out_idx=tf.int64)
    assert idx.dtype == count.dtype == tf.int64 and count.shape.as_list() == [None]
    with pytest.raises(ValueError, match="1-D"):
        tf.unique(ph([2, 3]))


def test_where_with_only_a_condition_gives_coordinates():
    coords = tf.where(tf.placeholder(tf.bool, [None, 3, 2]))
    assert coords.dtype == tf.int64 and coords.shape.as_list() == [None, 3]
