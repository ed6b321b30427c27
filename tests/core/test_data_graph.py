"""tf.data on the graph side (no kernels needed): element structures, static shapes, how functions are traced
(captures, nested conds and loops, control dependencies) and the errors TF raises while building."""

import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.traced_function import FunctionContext


def test_lists_are_one_component_and_dicts_and_tuples_are_structure():
    ds = tf.data.Dataset.from_tensor_slices(({"b": [[1.0, 2.0]], "a": [1]}, [[3, 4]]))
    assert ds.output_types == ({"a": tf.int32, "b": tf.float32}, tf.int32)
    assert ds.output_shapes == ({"a": tf.TensorShape([]), "b": tf.TensorShape([2])}, tf.TensorShape([2]))
    assert ds.output_classes == ({"a": tf.Tensor, "b": tf.Tensor}, tf.Tensor)
    mapped = ds.map(lambda d, v: [d["a"], d["a"]])  # a list returned by a map function is one stacked tensor
    assert mapped.output_shapes == tf.TensorShape([2])


def test_a_tuple_element_is_spread_over_the_arguments_and_others_are_one_argument():
    point = collections.namedtuple("Point", "x y")
    seen = {}

    def record(kind):
        def fn(*args):
            seen[kind] = len(args)
            return args[0]
        return fn

    tf.data.Dataset.from_tensors((1, 2)).map(record("tuple"))
    tf.data.Dataset.from_tensors({"a": 1, "b": 2}).map(lambda d: seen.setdefault("dict", type(d).__name__) and d["a"])
    tf.data.Dataset.from_tensors(point(1, 2)).map(record("namedtuple"))
    assert seen == {"tuple": 2, "dict": "dict", "namedtuple": 1}


def test_static_shapes_of_batching_follow_drop_remainder():
    ds = tf.data.Dataset.range(10)
    assert ds.batch(4).output_shapes.as_list() == [None]
    assert ds.batch(4, drop_remainder=True).output_shapes.as_list() == [4]
    assert ds.batch(tf.placeholder(tf.int64, []), drop_remainder=True).output_shapes.as_list() == [None]
    assert ds.batch(2).batch(3, drop_remainder=True).output_shapes.as_list() == [3, None]
    padded = ds.map(lambda x: tf.fill([x], x)).padded_batch(2, [5], drop_remainder=True)
    assert padded.output_shapes.as_list() == [2, 5]
    assert ds.batch(3).unbatch().output_shapes.as_list() == []


def test_padded_shapes_must_fit_the_components():
    ds = tf.data.Dataset.from_tensor_slices([[1, 2, 3]])
    with pytest.raises(ValueError, match="padded shape .* not compatible"):
        ds.padded_batch(2, [2])
    with pytest.raises(TypeError, match="padding value's type"):
        ds.padded_batch(2, [4], padding_values=tf.constant(1.5))


def test_captured_tensors_become_inputs_of_the_dataset_op():
    scale = tf.placeholder(tf.float32, [], name="scale")
    offset = tf.constant(1.0, name="offset")
    ds = tf.data.Dataset.from_tensor_slices(np.ones(3, np.float32)).map(lambda x: x * scale + offset + scale)
    op = ds._variant_tensor.op
    assert op.type == "MapDataset"
    assert [t.name for t in op.inputs[1:]] == ["scale:0", "offset:0"]  # each outer tensor captured once
    fn = op.get_attr("f")
    assert [t.op.type for t in fn.capture_args] == ["Placeholder", "Placeholder"]
    assert all(isinstance(t.op._control_flow_context, FunctionContext) for t in fn.outputs)


def test_loops_and_conds_nest_inside_a_function_and_capture_through_it():
    limit = tf.constant(3, tf.int64, name="limit")

    def fn(x):
        y = tf.cond(x > limit, lambda: x * 2, lambda: x + limit)
        return tf.while_loop(lambda i: i < limit, lambda i: i + 1, [y])

    op = tf.data.Dataset.range(5).map(fn)._variant_tensor.op
    assert [t.name for t in op.inputs[1:]] == ["limit:0"]


def test_outer_control_dependencies_are_dropped_inside_a_function():
    flag = tf.no_op(name="outside")
    with tf.control_dependencies([flag]):
        ds = tf.data.Dataset.range(3).map(lambda x: x + 1)
    fn = ds._variant_tensor.op.get_attr("f")
    assert all(flag not in t.op.control_inputs for t in fn.outputs)


def test_flat_map_and_interleave_need_a_dataset_back():
    ds = tf.data.Dataset.range(3)
    with pytest.raises(TypeError, match="must return a tf.data.Dataset"):
        ds.flat_map(lambda x: x)
    inner = ds.interleave(lambda x: tf.data.Dataset.from_tensors((x, [x, x])), cycle_length=2)
    assert inner.output_shapes == (tf.TensorShape([]), tf.TensorShape([2]))


def test_filter_predicate_must_be_a_scalar_bool():
    with pytest.raises(ValueError, match="tf.bool scalar"):
        tf.data.Dataset.range(3).filter(lambda x: tf.stack([x > 1, x > 2]))


def test_concatenate_and_zip_check_their_inputs():
    a, b = tf.data.Dataset.range(3), tf.data.Dataset.from_tensor_slices([1, 2])
    with pytest.raises(TypeError, match="different types"):
        a.concatenate(b)
    with pytest.raises(TypeError, match="zip"):
        tf.data.Dataset.zip([a, a])  # a list is one value in tf.data, not a structure


def test_one_shot_iterators_refuse_what_cannot_be_captured_by_value():
    v = tf.Variable(1, dtype=tf.int64)
    with pytest.raises(ValueError, match="placeholder"):
        tf.data.Dataset.range(tf.placeholder(tf.int64, [])).make_one_shot_iterator()
    with pytest.raises(ValueError, match="stateful"):
        tf.data.Dataset.from_tensors(v.read_value()).make_one_shot_iterator()
    tf.data.Dataset.range(3).map(lambda x: x + tf.random_uniform([], 0, 5, tf.int64)).make_one_shot_iterator()


def test_iterator_structure_and_get_next_shapes():
    it = tf.data.Iterator.from_structure((tf.int64, {"s": tf.string}), (tf.TensorShape([None]), {"s": []}))
    x, d = it.get_next()
    assert x.shape.as_list() == [None] and d["s"].shape.as_list() == [] and d["s"].dtype == tf.string
    with pytest.raises(ValueError, match="initializer"):
        it.initializer
    ds = tf.data.Dataset.zip((tf.data.Dataset.range(2).batch(1), {"s": tf.data.Dataset.from_tensors("a")}))
    assert it.make_initializer(ds).type == "MakeIterator"


def test_graph_def_records_traced_functions_by_name():
    tf.data.Dataset.range(3).map(lambda x: x * 2, num_parallel_calls=2)
    node = next(n for n in tf.get_default_graph().as_graph_def().node if n.op == "ParallelMapDataset")
    func = node.attr["f"].func  # TF's NameAttrList: the function's name, then what the graph records of it
    assert func.name == "map_fn" and list(func.attr["outputs"].list.s) == [b"map_fn/Mul:0"]
