"""Graph building with the core alone: names, scopes, dependencies, collections, devices, shapes."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_util import constant_value


def test_unique_names_and_name_scopes():
    a = tf.constant(1.0, name="c")
    b = tf.constant(2.0, name="c")
    with tf.name_scope("layer") as scope:
        c = tf.constant(3.0, name="c")
        with tf.name_scope("inner"):
            d = tf.identity(c)
    with tf.name_scope("layer"):
        e = tf.identity(c)
    with tf.name_scope("layer/"):
        f = tf.identity(c, name="again")
    assert (a.op.name, b.op.name, c.op.name, d.op.name) == ("c", "c_1", "layer/c", "layer/inner/Identity")
    assert scope == "layer/"
    assert e.op.name == "layer_1/Identity"
    assert f.op.name == "layer/again"
    assert a.name == "c:0"


def test_control_dependencies_and_clearing():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    with tf.control_dependencies([a]):
        c = tf.identity(b)
        with tf.control_dependencies(None):
            d = tf.identity(b)
        e = tf.identity(a)  # already a data input: no duplicate control edge
    assert c.op.control_inputs == [a.op]
    assert d.op.control_inputs == []
    assert e.op.control_inputs == []


def test_collections_and_scoped_lookup():
    a = tf.constant(1.0, name="x/a")
    b = tf.constant(2.0, name="y/b")
    tf.add_to_collection("mine", a)
    tf.add_to_collections(["mine", "other"], b)
    assert tf.get_collection("mine") == [a, b]
    assert tf.get_collection("mine", scope="y") == [b]
    assert tf.get_collection("other") == [b]
    tf.get_collection_ref("mine").append(3)
    assert len(tf.get_collection("mine")) == 3


def test_device_scopes_merge_and_functions():
    with tf.device("/job:ps/task:1"):
        with tf.device("/cpu:0"):
            a = tf.constant(1.0)
        with tf.device(tf.DeviceSpec(device_type="GPU", device_index=2)):
            b = tf.constant(1.0)
    with tf.device(lambda op: "/device:CPU:3" if op.type == "Const" else ""):
        c = tf.constant(1.0)
        d = tf.identity(c)
    assert a.device == "/job:ps/task:1/device:CPU:0"
    assert b.device == "/job:ps/task:1/device:GPU:2"
    assert (c.device, d.device) == ("/device:CPU:3", "")


def test_colocate_with_takes_device_and_group():
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="anchor")
    with tf.device("/cpu:0"), tf.colocate_with(a):
        b = tf.identity(a)
    assert b.device == a.device
    assert b.op.colocation_groups() == ["loc:@anchor"]


def test_static_shapes_and_set_shape():
    x = tf.placeholder(tf.float32, [None, 3])
    assert x.shape.as_list() == [None, 3]
    assert x.get_shape()[1].value == 3 and x.shape[0].value is None
    x.set_shape([5, 3])
    assert x.shape.as_list() == [5, 3]
    with pytest.raises(ValueError, match="cannot set the shape"):
        x.set_shape([5, 4])
    y = tf.placeholder(tf.float32)
    assert y.shape.ndims is None


def test_incompatible_matmul_fails_when_built_naming_both_shapes():
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [4, 5])
    with pytest.raises(ValueError) as info:
        tf.matmul(a, b)
    assert "(2, 3)" in str(info.value) and "(4, 5)" in str(info.value)
    assert "test_graph_building.py" in str(info.value)


def test_dtype_inference_and_mismatch_message():
    x = tf.placeholder(tf.float64, [2])
    y = tf.add(x, 1)
    assert y.dtype == tf.float64
    z = tf.add(2, 3)
    assert z.dtype == tf.int32
    with pytest.raises(TypeError, match="int32 that does not match type float64"):
        tf.add(x, tf.constant(1))
    with pytest.raises(TypeError, match="non-integral"):
        tf.add(tf.constant(1), 1.5)


def test_attr_type_constraint_error():
    with pytest.raises(TypeError, match="not in the allowed list"):
        tf.matmul(tf.constant([[True]]), tf.constant([[True]]))


def test_constant_fill_and_shapes():
    c = tf.constant(7, shape=[2, 2])
    np.testing.assert_array_equal(c.op.get_attr("value"), np.full((2, 2), 7, np.int32))
    c = tf.constant([1.0, 2.0], shape=[4])
    np.testing.assert_array_equal(c.op.get_attr("value"), [1, 2, 2, 2])
    assert tf.constant(np.zeros(3)).dtype == tf.float64
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(["a", "bc"]).dtype == tf.string


def test_graph_def_round_trip():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.constant(np.arange(4, dtype=np.float32).reshape(2, 2), name="w")
    gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        y = tf.matmul(x, w, transpose_b=True, name="y")
    gd = tf.get_default_graph().as_graph_def()
    data = gd.SerializeToString()
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(tf.GraphDef.FromString(data), name="")
    gd2 = g2.as_graph_def()
    assert gd2 == gd
    y2 = g2.get_tensor_by_name("y:0")
    assert y2.shape.as_list() == [None, 2]
    assert y2.op.get_attr("transpose_b") is True
    assert [c.name for c in y2.op.control_inputs] == ["gate"]
    assert y.name == "y:0"


def test_import_graph_def_with_input_map_and_prefix():
    with tf.Graph().as_default() as g1:
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.identity(x, name="out")
    gd = g1.as_graph_def()
    c = tf.constant([1.0, 2.0])
    (out,) = tf.import_graph_def(gd, input_map={"x:0": c}, return_elements=["out:0"], name="imp")
    assert out.name == "imp/out:0"
    assert out.op.inputs[0] is c


def test_finalized_graph_refuses_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0)
        g.finalize()
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)


def test_tensor_is_not_a_python_bool():
    with pytest.raises(TypeError, match="Python bool"):
        bool(tf.constant(True))


def test_lookup_by_name():
    tf.constant(1.0, name="k")
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("k:0").op is g.get_operation_by_name("k")
    with pytest.raises(KeyError, match="no operation named 'nope'"):
        g.get_operation_by_name("nope")


def test_the_standard_collections_fill_as_in_tf1():
    v = tf.Variable(1.0, name="v")
    frozen = tf.Variable(2.0, trainable=False, name="frozen")
    local = tf.Variable(0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES], trainable=False)
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == tf.global_variables() == [v, frozen]
    assert tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == tf.trainable_variables() == [v]
    assert tf.local_variables() == [local]
    init = tf.initialize_all_variables()  # the old alias tutorials use
    assert init.type == "NoOp" and set(init.control_inputs) == {v.initializer, frozen.initializer}
    q = tf.FIFOQueue(4, tf.float32, shapes=[])
    runner = tf.train.QueueRunner(q, [q.enqueue(1.0)])
    tf.train.add_queue_runner(runner)
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [runner]
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.batch_normalization(x, training=True)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert [op.name for op in updates] == ["batch_normalization/AssignMovingAvg/AssignSubVariableOp",
                                           "batch_normalization/AssignMovingAvg_1/AssignSubVariableOp"]
    assert tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)[1:] == [
        v for v in tf.global_variables() if v.name.endswith(("gamma:0", "beta:0"))]


def test_dtypes_are_never_equal_to_none():
    assert tf.float64 != None and not (tf.float64 == None)  # noqa: E711 - numpy reads None as float64
    with pytest.raises(TypeError, match="cannot convert None"):
        tf.as_dtype(None)


def test_string_constants_hold_bytes_as_in_tf1():
    """A str becomes its UTF-8 bytes (TF fetches bytes), and bytes keep trailing NULs (a serialized proto ends
    in one when its last field is empty; numpy's fixed-width bytes would drop them)."""
    assert constant_value(tf.constant("é")).item() == "é".encode()
    np.testing.assert_array_equal(constant_value(tf.constant([b"a\x00", b"\x0a\x00"])),
                                  np.array([b"a\x00", b"\x0a\x00"], dtype=object))
    assert constant_value(tf.constant(b"x\x00\x00")).item() == b"x\x00\x00"
    assert constant_value(tf.constant([], tf.string)).shape == (0,)


def test_none_is_refused_as_a_value_as_tf1_does():
    with pytest.raises(ValueError, match="None values not supported"):
        tf.convert_to_tensor(None)
    with pytest.raises(ValueError, match="None values not supported"):
        tf.add(None, 1.0)
    for nested in ([1.0, None], [[None]]):  # it became a string constant
        with pytest.raises(TypeError, match=r"Failed to convert elements of .* None is not a value"):
            tf.constant(nested)
