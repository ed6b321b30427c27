"""tf.saved_model: real TensorFlow's SavedModel loaded and run here, SavedModels written here (builder, simple_save)
loaded back, what a damaged one raises, the signature helpers, and real TensorFlow loading what was written here
when an interpreter with it is at hand."""

import os
import textwrap

import numpy as np
import pytest
from tf1_fixtures import FOLDER, NO_TF_REASON, array, load, run_in_tf, tf_python

import tensorweave as tf

CASES = load("graphdefs")
FILES = FOLDER / "graphdefs"


def _model():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.get_variable("w", [2, 3], initializer=tf.random_normal_initializer(seed=3))
    table = tf.get_variable("table", [5, 3], partitioner=tf.fixed_size_partitioner(2))
    y = tf.nn.softmax(tf.matmul(x, w) + tf.reduce_sum(table, axis=0), name="y")
    return x, y


def test_saved_model_of_tensorflow_loads_and_serves_its_outputs():
    case = CASES["saved_model"]
    with tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING],
                                          str(FILES / "encoder_saved_model"))
        signature = meta.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        assert signature.method_name == tf.saved_model.signature_constants.PREDICT_METHOD_NAME
        tokens = tf.saved_model.utils.get_tensor_from_tensor_info(signature.inputs["tokens"])
        output = tf.saved_model.utils.get_tensor_from_tensor_info(signature.outputs["output"])
        got = sess.run(output, {tokens: array(case["tokens"], np.int32)})
    np.testing.assert_allclose(got, array(case["output"]), rtol=1e-5, atol=1e-5)
    assert len(tf.global_variables()) == 21


def test_simple_save_then_load_gives_the_same_outputs_and_only_the_saved_model_files(tmp_path):
    x, y = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(y, {x: [[1.0, -2.0]]})
        path = tf.saved_model.simple_save(sess, str(tmp_path / "export"), {"x": x}, {"y": y})
    assert path == str(tmp_path / "export" / "saved_model.pb")
    assert sorted(os.listdir(tmp_path)) == ["export"]  # the staging directory was renamed, nothing left beside
    assert sorted(os.listdir(tmp_path / "export" / "variables")) == ["variables.data-00000-of-00001",
                                                                   "variables.index"]
    assert tf.saved_model.loader.maybe_saved_model_directory(str(tmp_path / "export"))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.load(sess, [tf.saved_model.SERVING], str(tmp_path / "export"))
        signature = meta.signature_def["serving_default"]
        got = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: [[1.0, -2.0]]})
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_builder_with_two_tag_sets_text_form_main_op_and_assets(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    x, y = _model()
    counter = tf.get_variable("counter", [], tf.int32, tf.zeros_initializer(),
                              collections=[tf.GraphKeys.LOCAL_VARIABLES])
    asset = tf.constant(str(vocab), name="vocab_path")
    tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
    with tf.control_dependencies([tf.local_variables_initializer()]):
        main_op = tf.assign_add(counter, 5)
    builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "export"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(y, {x: [[0.5, 0.5]]})
        builder.add_meta_graph_and_variables(
            sess, ["serve"], {"predict": tf.saved_model.predict_signature_def({"x": x}, {"y": y})},
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            main_op=main_op)
    with pytest.raises(AssertionError, match="already been saved"):
        builder.add_meta_graph_and_variables(sess, ["train"])
    builder.add_meta_graph(["train", "gpu"], main_op=main_op)  # the same main op again: one in the collection
    with pytest.raises(ValueError, match="already has main op"):
        builder.add_meta_graph(["eval"], main_op=tf.no_op(name="another"))
    assert builder.save(as_text=True).endswith("saved_model.pbtxt")
    assert (tmp_path / "export" / "assets" / "vocab.txt").read_text() == "a\nb\n"
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "export"))
        np.testing.assert_allclose(sess.run("y:0", {"x:0": [[0.5, 0.5]]}), expected, rtol=1e-6)
        assert sess.run(tf.local_variables()[0]) == 5  # the main op ran after the restore
        assert meta.asset_file_def[0].filename == "vocab.txt"
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["gpu", "train"], str(tmp_path / "export"))
        np.testing.assert_allclose(sess.run("y:0", {"x:0": [[0.5, 0.5]]}), expected, rtol=1e-6)
        assert sess.run(tf.local_variables()[0]) == 5
        with pytest.raises(RuntimeError, match=r"could not be found.*\[\['serve'\], \['train', 'gpu'\]\]"):
            tf.saved_model.loader.load(sess, ["eval"], str(tmp_path / "export"))


def test_export_directory_must_be_new_or_empty(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "taken"))
    (tmp_path / "empty").mkdir()
    x, y = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, str(tmp_path / "empty"), {"x": x}, {"y": y})
    assert tf.saved_model.contains_saved_model(str(tmp_path / "empty"))


def test_a_crash_before_the_rename_leaves_no_saved_model(tmp_path, monkeypatch):
    x, y = _model()

    def crash(src, dst):
        raise OSError("simulated crash before the rename")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        monkeypatch.setattr(os, "rename", crash)
        with pytest.raises(OSError, match="simulated crash"):
            tf.saved_model.simple_save(sess, str(tmp_path / "export"), {"x": x}, {"y": y})
    assert os.listdir(tmp_path) == []


def test_damaged_saved_model_raises_data_loss_naming_the_file(tmp_path):
    x, y = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, str(tmp_path / "a"), {"x": x}, {"y": y})
        tf.saved_model.simple_save(sess, str(tmp_path / "b"), {"x": x}, {"y": y})
    (tmp_path / "a" / "saved_model.pb").write_bytes(b"\x0a\xff\xff\xff garbage")
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.DataLossError, match=r"a/saved_model\.pb is damaged"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "a"))
    data = tmp_path / "b" / "variables" / "variables.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[3] ^= 0xFF
    data.write_bytes(bytes(raw))
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.DataLossError, match="variables.data-00000-of-00001"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "b"))
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        tf.saved_model.loader.load(tf.Session(), ["serve"], str(tmp_path / "nothing"))


def test_signature_helpers():
    examples = tf.placeholder(tf.string, [None], name="examples")
    scores = tf.placeholder(tf.float32, [None, 3], name="scores")
    classes = tf.placeholder(tf.string, [None, 3], name="classes")
    sparse = tf.sparse_placeholder(tf.float32, name="sp")
    utils, sdu = tf.saved_model.utils, tf.saved_model.signature_def_utils
    info = utils.build_tensor_info(scores)
    assert info.name == "scores:0" and info.dtype == tf.float32.as_datatype_enum
    assert [d.size for d in info.tensor_shape.dim] == [-1, 3]
    back = utils.get_tensor_from_tensor_info(utils.build_tensor_info(sparse))
    assert back.values is sparse.values and back.indices is sparse.indices
    classify = sdu.classification_signature_def(examples, classes, scores)
    assert set(classify.outputs) == {"classes", "scores"} and sdu.is_valid_signature(classify)
    regress = sdu.regression_signature_def(examples, scores)
    assert regress.method_name == "tensorflow/serving/regress" and sdu.is_valid_signature(regress)
    assert sdu.is_valid_signature(sdu.predict_signature_def({"x": scores}, {"y": classes}))
    assert not sdu.is_valid_signature(sdu.build_signature_def({"inputs": utils.build_tensor_info(scores)},
                                                              {"outputs": utils.build_tensor_info(scores)},
                                                              tf.saved_model.REGRESS_METHOD_NAME))
    with pytest.raises(ValueError, match="Prediction inputs cannot be None or empty"):
        sdu.predict_signature_def({}, {"y": scores})
    with pytest.raises(ValueError, match="must be a string Tensor"):
        sdu.classification_signature_def(scores, classes, None)


def test_a_signature_naming_a_missing_tensor_is_refused(tmp_path):
    x, y = _model()
    signature = tf.saved_model.build_signature_def({"x": tf.saved_model.build_tensor_info(x)}, {}, "m")
    signature.outputs["y"].name = "nowhere:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        builder = tf.saved_model.Builder(str(tmp_path / "e"))
        with pytest.raises(ValueError, match="output 'y' names 'nowhere:0', which is not in the graph"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"s": signature})


_LOAD_IN_TF = textwrap.dedent("""
    import json, sys
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], sys.argv[1])
        signature = meta.signature_def["serving_default"]
        y = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: [[1.0, -2.0]]})
    print(json.dumps({"y": y.tolist()}))
""")


@pytest.mark.skipif(tf_python() is None, reason=NO_TF_REASON)
def test_real_tensorflow_loads_a_saved_model_written_here(tmp_path):
    x, y = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(y, {x: [[1.0, -2.0]]})
        tf.saved_model.simple_save(sess, str(tmp_path / "export"), {"x": x}, {"y": y})
    got = run_in_tf(_LOAD_IN_TF, tmp_path / "export")
    np.testing.assert_allclose(got["y"], expected, rtol=1e-6)
