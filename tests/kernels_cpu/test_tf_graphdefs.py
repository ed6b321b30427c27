"""GraphDefs and meta graphs of real TensorFlow imported and run here (tests/fixtures/tf1/make_graphdefs.py), the
protos written here, and the round trip through real TensorFlow when an interpreter with it is at hand."""

import json
import os
import textwrap

import numpy as np
import pytest
from google.protobuf import text_format
from tf1_fixtures import FOLDER, NO_TF_REASON, array, load, run_in_tf, tf_python

import tensorweave as tf
from tensorweave.framework.attr_value import from_attr_value

CASES = load("graphdefs")
FILES = FOLDER / "graphdefs"


def _close(got, expected):
    np.testing.assert_allclose(got, array(expected), rtol=1e-5, atol=1e-5)


def test_frozen_graph_from_tensorflow_runs_as_tensorflow_ran_it():
    graph_def = tf.GraphDef()
    graph_def.ParseFromString(tf.gfile.GFile(str(FILES / "encoder_frozen.pb"), "rb").read())
    (output,) = tf.import_graph_def(graph_def, return_elements=["output:0"], name="frozen")
    with tf.Session() as sess:
        got = sess.run(output, {"frozen/tokens:0": array(CASES["encoder"]["tokens"], np.int32)})
    _close(got, CASES["encoder"]["output"])


def test_text_graph_def_with_reference_variables_runs_after_its_init_op():
    graph_def = text_format.Merge((FILES / "tiny" / "graph.pbtxt").read_text(), tf.GraphDef())
    tf.import_graph_def(graph_def, name="")
    with tf.Session() as sess:
        sess.run("init")
        got = sess.run("y:0", {"x:0": array(CASES["tiny"]["x"], np.float32)})
    _close(got, CASES["tiny"]["y"])


@pytest.mark.parametrize("n", ["0", "3", "5"])
def test_tensorflows_while_loop_and_cond_run_here(n):
    """Control flow v1 as real TF writes it: Enter/Merge/Switch/NextIteration/Exit/LoopCond, and a cond."""
    graph_def = tf.GraphDef.FromString((FILES / "control_flow.pb").read_bytes())
    assert {"Enter", "Merge", "Switch", "NextIteration", "Exit", "LoopCond"} <= {n.op for n in graph_def.node}
    tf.import_graph_def(graph_def, name="")
    case = CASES["control_flow"]
    with tf.Session() as sess:
        got = sess.run("out:0", {"x:0": case["x"], "n:0": int(n)})
    _close(got, case["out_by_n"][n])


def test_meta_graph_of_tensorflow_restores_its_checkpoint_and_collections():
    saver = tf.train.import_meta_graph(str(FILES / "encoder" / "model.ckpt-3.meta"))
    variables = tf.global_variables()
    assert len(variables) == 21 and len(tf.trainable_variables()) == 20
    assert "encoder/embedding/part_1:0" in [v.name for v in variables]
    assert tf.train.get_global_step().name == "global_step:0"
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(str(FILES / "encoder")))
        got = sess.run("output:0", {"tokens:0": array(CASES["encoder"]["tokens"], np.int32)})
        assert sess.run(tf.train.get_global_step()) == 0
    _close(got, CASES["encoder"]["output"])


def test_text_meta_graph_with_stripped_default_attrs_restores():
    saver = tf.train.import_meta_graph(str(FILES / "tiny" / "model.meta.pbtxt"))  # no SaverDef: a new Saver
    with tf.Session() as sess:
        saver.restore(sess, str(FILES / "tiny" / "model.ckpt"))
        got = sess.run("y:0", {"x:0": array(CASES["tiny"]["x"], np.float32)})
    _close(got, CASES["tiny"]["y"])


@pytest.mark.needs_board  # the graph has summary ops
def test_imported_training_graph_trains_as_tensorflow_did():
    """TF's ApplyGradientDescent/AssignAdd on reference variables run as resource updates: same loss, same step."""
    saver = tf.train.import_meta_graph(str(FILES / "linear" / "model.ckpt-0.meta"))
    case = CASES["linear"]
    feed = {"x:0": array(case["x"], np.float32), "y:0": array(case["y"], np.float32)}
    (train_op,) = set(tf.get_collection(tf.GraphKeys.TRAIN_OP))
    (loss,) = tf.get_collection(tf.GraphKeys.LOSSES)
    with tf.Session() as sess:
        saver.restore(sess, str(FILES / "linear" / "model.ckpt-0"))
        for _ in range(2):
            sess.run(train_op, feed)
        got, step = sess.run([loss, tf.train.get_global_step()], feed)
        summary = tf.Summary.FromString(sess.run(tf.get_collection(tf.GraphKeys.SUMMARIES)[0], feed))
    assert step == case["step"]
    np.testing.assert_allclose(got, case["loss_after_two_steps"], rtol=1e-6)
    assert summary.value[0].tag == "loss"


def test_every_missing_op_type_is_named_at_once():
    graph_def = tf.GraphDef()
    for name, op in (("a", "FancyOpOne"), ("b", "FancyOpTwo"), ("c", "FancyOpOne"), ("d", "NoOp")):
        graph_def.node.add(name=name, op=op)
    with pytest.raises(ValueError, match=r"2 op type\(s\).*FancyOpOne \(nodes 'a', 'c'\); FancyOpTwo \(nodes 'b'\)"):
        tf.import_graph_def(graph_def)
    assert tf.get_default_graph().get_operations() == []


def test_an_attr_tensorweave_cannot_honour_is_refused_by_name():
    graph_def = tf.GraphDef()
    node = graph_def.node.add(name="m", op="MatMul", input=["a", "a"])
    graph_def.node.add(name="a", op="Placeholder").attr["dtype"].type = tf.float32.as_datatype_enum
    node.attr["T"].type = tf.float32.as_datatype_enum
    node.attr["precision_mode"].s = b"fast"
    with pytest.raises(ValueError, match=r"node 'm' \(MatMul\).*precision_mode='fast'"):
        tf.import_graph_def(graph_def)
    producer = tf.MetaGraphDef().meta_info_def.stripped_op_list
    attr = producer.op.add(name="MatMul").attr.add(name="precision_mode", type="string")
    attr.default_value.s = b"fast"  # the writer's OpDef says it is the default: dropping it changes nothing
    (m,) = tf.import_graph_def(graph_def, return_elements=["m"], producer_op_list=producer)
    assert m.type == "MatMul" and "precision_mode" not in m.node_def.attr


def test_graph_def_round_trip_keeps_types_shapes_attrs_and_control_inputs():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        y = tf.nn.conv2d(tf.reshape(x, [-1, 1, 3, 1]), tf.ones([1, 2, 1, 1]), [1, 1, 1, 1], "SAME", name="conv")
    words = tf.constant([b"a", b"\xff"], name="words")
    graph_def = tf.get_default_graph().as_graph_def(add_shapes=True)
    conv = next(n for n in graph_def.node if n.name == "conv")
    assert conv.input[-1] == "^gate" and conv.attr["padding"].s == b"SAME"
    assert list(conv.attr["strides"].list.i) == [1, 1, 1, 1]
    assert from_attr_value(conv.attr["_output_shapes"], "list(shape)")[0].as_list() == [None, 1, 3, 1]
    with tf.Graph().as_default():
        out, strings = tf.import_graph_def(tf.GraphDef.FromString(graph_def.SerializeToString()),
                                           return_elements=["conv:0", "words:0"], name="")
        assert out.op.control_inputs[0].name == "gate" and out.shape.as_list() == [None, 1, 3, 1]
        with tf.Session() as sess:
            got, values = sess.run([out, strings], {"x:0": [[1.0, 2.0, 3.0]]})
    np.testing.assert_array_equal(got.reshape(-1), [3.0, 5.0, 3.0])
    assert list(values) == [b"a", b"\xff"] and y.dtype == tf.float32 and words.dtype == tf.string


def test_while_loop_graph_survives_text_form():
    i = tf.while_loop(lambda i: i < 10, lambda i: i + 3, [tf.constant(0)], name="loop")
    text = text_format.MessageToString(tf.get_default_graph().as_graph_def())
    with tf.Graph().as_default():
        tf.import_graph_def(text, name="again")
        with tf.Session() as sess:
            assert sess.run(f"again/{i.op.name}:0") == 12


def test_old_json_graph_def_and_meta_graph_still_load(tmp_path):
    """What Tensorweave wrote before GraphDefs were TF's protos: a JSON GraphDef, and a JSON .meta with a Saver."""
    node = {"name": "v", "op": "Const", "input": [], "device": "",
            "attr": {"dtype": {"type": "float32"}, "value": {"tensor": {"dtype": "float32", "shape": [2],
                                                                       "data": "AACAPwAAAEA="}}}}
    old_graph = {"format": "tensorweave.GraphDef/1", "versions": {"producer": 1}, "node": [node]}
    (v,) = tf.import_graph_def(json.dumps(old_graph).encode(), return_elements=["v:0"], name="old")
    meta = {"format": "tensorweave-metagraph/1", "graph_def": json.dumps(old_graph), "saver_def": None,
            "collection_def": {"outputs": [{"node": "v:0"}], "labels": [{"value": "cat"}]}}
    (tmp_path / "old.meta").write_text(json.dumps(meta))
    with tf.Graph().as_default():
        assert tf.train.import_meta_graph(str(tmp_path / "old.meta")) is None
        assert tf.get_collection("labels") == ["cat"]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(tf.get_collection("outputs")[0]), [1.0, 2.0])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_old_json_merge_of_n_prefixes_becomes_tfs_vector_form():
    def const(name, text):
        data = {"dtype": "string", "shape": [], "strings": [text]}
        return {"name": name, "op": "Const", "input": [], "attr": {"dtype": {"type": "string"},
                                                                   "value": {"tensor": data}}}
    merge = {"name": "merge", "op": "MergeV2Checkpoints", "input": ["a", "b", "dest", "^a"],
             "attr": {"N": {"v": 2}, "delete_old_dirs": {"v": True}}}
    old = {"format": "tensorweave.GraphDef/1", "node": [const("a", "p0"), const("b", "p1"), const("dest", "d"), merge]}
    (op,) = tf.import_graph_def(json.dumps(old), return_elements=["merge"], name="")
    prefixes, destination = op.inputs
    assert prefixes.op.type == "Pack" and [t.op.name for t in prefixes.op.inputs] == ["a", "b"]
    assert destination.op.name == "dest" and [c.name for c in op.control_inputs] == ["a"]
    with tf.Session() as sess:
        assert list(sess.run(prefixes)) == [b"p0", b"p1"]


def test_write_graph_is_atomic_text_or_binary(tmp_path, monkeypatch):
    tf.constant(1.0, name="c")
    text_path = tf.train.write_graph(tf.get_default_graph(), str(tmp_path / "logs"), "g.pbtxt")
    binary_path = tf.io.write_graph(tf.get_default_graph().as_graph_def(), str(tmp_path / "logs"), "g.pb",
                                    as_text=False)
    assert text_format.Merge(open(text_path).read(), tf.GraphDef()).node[0].name == "c"
    assert tf.GraphDef.FromString(open(binary_path, "rb").read()).node[0].op == "Const"
    from tensorweave.formats import checkpoint_format

    def crash(tmp, path):
        raise OSError("simulated crash before the rename")
    monkeypatch.setattr(checkpoint_format, "commit", crash)
    with pytest.raises(OSError, match="simulated crash"):
        tf.train.write_graph(tf.get_default_graph(), str(tmp_path / "logs"), "g.pb", as_text=False)
    assert sorted(os.listdir(tmp_path / "logs")) == ["g.pb", "g.pbtxt"]


def test_exported_meta_graph_strips_defaults_and_imports_them_back(tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    tf.reduce_sum(x, name="total")
    meta = tf.train.export_meta_graph(str(tmp_path / "m.meta"), strip_default_attrs=True)
    total = next(n for n in meta.graph_def.node if n.name == "total")
    assert "keep_dims" not in total.attr and meta.meta_info_def.stripped_default_attrs
    assert "keep_dims" in {a.name for op in meta.meta_info_def.stripped_op_list.op if op.name == "Sum"
                           for a in op.attr}
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "m.meta"))
        assert tf.get_default_graph().get_operation_by_name("total").get_attr("keep_dims") is False
        with tf.Session() as sess:
            assert sess.run("total:0", {"x:0": [1.5, 2.0]}) == 3.5


_IMPORT_IN_TF = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    out = {}
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(sys.argv[1] + "/model.ckpt-5.meta")
        with tf.Session() as sess:
            saver.restore(sess, sys.argv[1] + "/model.ckpt-5")
            out["meta"] = sess.run("out:0", {"x:0": [[1.0, 2.0]]}).tolist()
            out["trainable"] = sorted(v.name for v in tf.trainable_variables())
    with tf.Graph().as_default():
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(open(sys.argv[1] + "/frozen.pb", "rb").read())
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            out["frozen"] = sess.run("out:0", {"x:0": [[1.0, 2.0]]}).tolist()
    try:
        with tf.Graph().as_default():
            graph_def = tf.GraphDef()
            graph_def.ParseFromString(open(sys.argv[1] + "/own_op.pb", "rb").read())
            tf.import_graph_def(graph_def, name="")
        out["own_op"] = "imported"
    except Exception as e:
        out["own_op"] = str(e)
    print(json.dumps(out))
""")


@pytest.mark.skipif(tf_python() is None, reason=NO_TF_REASON)
@pytest.mark.needs_board  # the graph has summary ops
def test_real_tensorflow_imports_what_tensorweave_wrote(tmp_path):
    """Saver.save's .meta (TF format checkpoint) and a frozen GraphDef run in TF with the same outputs; a
    Tensorweave-only op keeps its type name, which TF refuses with its own message."""
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.get_variable("w", [2, 3], initializer=tf.random_normal_initializer(seed=1))
    table = tf.get_variable("table", [6, 3], partitioner=tf.fixed_size_partitioner(2))
    out = tf.nn.relu(tf.matmul(x, w) + tf.reduce_mean(table, axis=0), name="out")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(out, {x: [[1.0, 2.0]]})
        tf.train.Saver(checkpoint_format="tensorflow").save(sess, str(tmp_path / "model.ckpt"), global_step=5)
        frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph.as_graph_def(), ["out"])
    tf.train.write_graph(frozen, str(tmp_path), "frozen.pb", as_text=False)
    with tf.Graph().as_default() as own:
        tf.extension.apply_op("MpiAllReduce", [[tf.constant([1.0])]], name="reduce")  # tensorweave-distributed's
        tf.train.write_graph(own, str(tmp_path), "own_op.pb", as_text=False)
    got = run_in_tf(_IMPORT_IN_TF, tmp_path)
    np.testing.assert_allclose(got["meta"], expected, rtol=1e-6)
    np.testing.assert_allclose(got["frozen"], expected, rtol=1e-6)
    assert got["trainable"] == ["table/part_0:0", "table/part_1:0", "w:0"]
    assert "MpiAllReduce" in got["own_op"] and "not registered" in got["own_op"].lower()


def test_queue_runners_travel_with_the_meta_graph(tmp_path):
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[]], name="numbers")
    counter = tf.Variable(0.0, name="counter")
    enqueue = queue.enqueue([tf.assign_add(counter, 1.0)])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    tf.train.export_meta_graph(str(tmp_path / "q.meta"))
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "q.meta"))
        (runner,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert runner.queue.name == "numbers" and runner.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            got = [sess.run(runner.queue.dequeue()) for _ in range(3)]
            coord.request_stop()
            coord.join(threads)
    assert got == [1.0, 2.0, 3.0]
