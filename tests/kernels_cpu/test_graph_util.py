"""tf.graph_util: freezing variables (resource variables here, reference variables of a real TF meta graph),
cutting sub-graphs and removing training nodes, on the graph's GraphDef and on TensorFlow's."""

import numpy as np
import pytest
from tf1_fixtures import FOLDER, array, load

import tensorweave as tf

CASES = load("graphdefs")


def _frozen_runs(graph_def, feeds, fetch):
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            return sess.run(fetch, feeds)


def test_freezing_keeps_outputs_and_leaves_no_variable():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.get_variable("w", [2, 3], initializer=tf.random_normal_initializer(seed=1))
    embedding = tf.get_variable("embedding", [5, 3], initializer=tf.random_normal_initializer(seed=2))
    out = tf.add(tf.matmul(x, w), tf.nn.embedding_lookup(embedding, [1, 1]), name="out")
    tf.identity(w, name="unused")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(out, {x: [[1.0, 2.0], [3.0, 4.0]]})
        frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph.as_graph_def(), ["out"])
    ops = {n.op for n in frozen.node}
    assert not ops & {"VarHandleOp", "ReadVariableOp", "ResourceGather", "AssignVariableOp"}
    assert "unused" not in {n.name for n in frozen.node}
    got = _frozen_runs(frozen.SerializeToString(), {"x:0": [[1.0, 2.0], [3.0, 4.0]]}, "out:0")
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_whitelist_and_blacklist_keep_the_other_variables():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    tf.add(a, b, name="sum")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        graph_def = sess.graph.as_graph_def()
        only_a = tf.graph_util.convert_variables_to_constants(sess, graph_def, ["sum"], variable_names_whitelist=["a"])
        not_a = tf.graph_util.convert_variables_to_constants(sess, graph_def, ["sum"], variable_names_blacklist=["a"])
    kinds = {n.name: n.op for n in only_a.node}
    assert kinds["a"] == "Const" and kinds["b"] == "VarHandleOp"
    kinds = {n.name: n.op for n in not_a.node}
    assert kinds["a"] == "VarHandleOp" and kinds["b"] == "Const"


def test_freezing_tensorflows_meta_graph_of_reference_variables():
    """The encoder of a real TF .meta (VariableV2, imported as resource variables), frozen from its GraphDef."""
    saver = tf.train.import_meta_graph(str(FOLDER / "graphdefs" / "encoder" / "model.ckpt-3.meta"))
    tf_graph_def = tf.train.read_meta_graph_file(str(FOLDER / "graphdefs" / "encoder" / "model.ckpt-3.meta")).graph_def
    with tf.Session() as sess:
        saver.restore(sess, str(FOLDER / "graphdefs" / "encoder" / "model.ckpt-3"))
        frozen = tf.compat.v1.graph_util.convert_variables_to_constants(sess, tf_graph_def, ["output"])
    assert "VariableV2" not in {n.op for n in frozen.node}
    case = CASES["encoder"]
    got = _frozen_runs(frozen, {"tokens:0": array(case["tokens"], np.int32)}, "output:0")
    np.testing.assert_allclose(got, array(case["output"]), rtol=1e-5, atol=1e-5)


def test_extract_sub_graph_follows_data_and_control_inputs():
    a = tf.constant(1.0, name="a")
    gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        b = tf.identity(a, name="b")
    tf.constant(2.0, name="other")
    sub = tf.graph_util.extract_sub_graph(tf.get_default_graph().as_graph_def(), [b.op.name])
    assert [n.name for n in sub.node] == ["a", "gate", "b"]
    with pytest.raises(AssertionError, match="missing is not in graph"):
        tf.graph_util.extract_sub_graph(tf.get_default_graph().as_graph_def(), ["missing"])


def test_remove_training_nodes_splices_identities_but_keeps_protected_and_control_ones():
    x = tf.placeholder(tf.float32, name="x")
    checked = tf.debugging.check_numerics(tf.identity(tf.identity(x, name="i1"), name="i2"), "bad", name="check")
    gate = tf.identity(x, name="gate")
    with tf.control_dependencies([gate.op]):
        y = tf.multiply(checked, tf.constant(2.0, name="two"), name="y")
    tf.identity(y, name="kept")
    pruned = tf.python.framework.graph_util.remove_training_nodes(tf.get_default_graph().as_graph_def(),
                                                                  protected_nodes=["kept"])
    names = [n.name for n in pruned.node]
    assert "i1" not in names and "i2" not in names and "check" not in names
    assert "gate" in names and "kept" in names
    assert next(n for n in pruned.node if n.name == "y").input[0] == "x"
    assert _frozen_runs(pruned, {"x:0": 3.0}, "kept:0") == 6.0


def test_must_run_on_cpu_and_shapes_by_node_name():
    s = tf.constant("text", name="s")
    f = tf.constant(1.0, name="f")
    v = tf.Variable(1.0, name="v")
    gu = tf.graph_util
    assert gu.must_run_on_cpu(s.op) and not gu.must_run_on_cpu(f.op)
    assert gu.must_run_on_cpu(v.op, pin_variables_on_cpu=True) and not gu.must_run_on_cpu(v.op)
    assert gu.tensor_shape_from_node_def_name(tf.get_default_graph(), "f").as_list() == []
