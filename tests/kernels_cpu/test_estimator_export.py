"""Estimator.export_saved_model: receivers and export outputs with TF's checks, the signatures written (and
those left out), the folder layout, assets_extra, as_text, and the export served by real TensorFlow (the
numbers against TF's own Estimator are in test_estimator_tf1.py)."""

import json
import logging
import os
import textwrap

import numpy as np
import pytest

import tensorweave as tf
from tf1_fixtures import run_in_tf, tf_python

X = np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3)


def model_fn(features, labels, mode):
    w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.5))
    y = tf.matmul(features["x"], w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y}, export_outputs={
            "serving_default": tf.estimator.export.PredictOutput({"y": y}),
            "regress": tf.estimator.export.RegressionOutput(tf.reshape(y, [-1]))})
    loss = tf.losses.mean_squared_error(labels, y)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.fixture
def trained(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": X}, X.sum(1, keepdims=True), batch_size=2,
                                                 num_epochs=1, shuffle=False))
    return est


def raw_receiver():
    with tf.Graph().as_default():
        return tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [2, 3])})


def test_receivers_and_outputs_check_as_tf():
    with pytest.raises(ValueError, match="feature x must be a Tensor or SparseTensor."):
        tf.estimator.export.ServingInputReceiver({"x": 1.0}, {"in": tf.placeholder(tf.float32)})
    with pytest.raises(ValueError, match="receiver_tensor keys must be strings: 3."):
        tf.estimator.export.ServingInputReceiver({"x": tf.constant(1.0)}, {3: tf.placeholder(tf.float32)})
    single = tf.estimator.export.ServingInputReceiver(tf.constant(1.0), tf.placeholder(tf.float32))
    assert sorted(single.features) == ["feature"] and sorted(single.receiver_tensors) == ["input"]
    tensor = tf.estimator.export.TensorServingInputReceiver(tf.constant([1.0]), tf.placeholder(tf.float32))
    assert isinstance(tensor.features, tf.Tensor)
    with pytest.raises(ValueError, match="Classification scores must be a float32 Tensor"):
        tf.estimator.export.ClassificationOutput(scores=tf.constant([1]))
    with pytest.raises(ValueError, match="At least one of scores and classes must be set."):
        tf.estimator.export.ClassificationOutput()
    with pytest.raises(ValueError, match="Regression output value must be a float32 Tensor"):
        tf.estimator.export.RegressionOutput(tf.constant(["a"]))
    with pytest.raises(ValueError, match="Prediction output value must be a Tensor; got 3."):
        tf.estimator.export.PredictOutput({"a": 3})
    y = tf.constant([[1.0]])
    with pytest.raises(ValueError, match="Multiple export_outputs were provided, but none of them is specified"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT, predictions=y, export_outputs={
            "a": tf.estimator.export.PredictOutput(y), "b": tf.estimator.export.PredictOutput(y)})
    with pytest.raises(TypeError, match="Values in export_outputs must be ExportOutput objects"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT, predictions=y, export_outputs={"a": y})


def test_parsing_receiver_parses_examples(sess):
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.FixedLenFeature([3], tf.float32)}, default_batch_size=2)()
    examples = receiver.receiver_tensors["examples"]
    assert examples.op.name == "input_example_tensor" and examples.shape.as_list() == [2]
    serialized = [tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
        float_list=tf.train.FloatList(value=row))})).SerializeToString() for row in X[:2]]
    np.testing.assert_allclose(sess.run(receiver.features["x"], {examples: serialized}), X[:2])


def test_export_layout_signatures_assets_and_as_text(trained, tmp_path, caplog):
    extra = tmp_path / "vocab.txt"
    extra.write_text("a\nb\n")
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        export_dir = trained.export_savedmodel(str(tmp_path / "export"), raw_receiver(),
                                               assets_extra={"data/vocab.txt": str(extra)}, as_text=True)
    assert isinstance(export_dir, bytes) and os.path.basename(export_dir).isdigit()
    assert sorted(os.listdir(tmp_path / "export")) == [os.path.basename(export_dir).decode()]  # no temp- left
    assert (tmp_path / "export" / os.path.basename(export_dir).decode() / "saved_model.pbtxt").exists()
    assert (open(os.path.join(export_dir, b"assets.extra", b"data", b"vocab.txt")).read() == "a\nb\n")
    logged = [r.getMessage() for r in caplog.records]
    assert "Signatures INCLUDED in export for Predict: ['serving_default']" in logged
    assert "Signatures INCLUDED in export for Regress: None" in logged
    assert any(m.startswith("'regress' : Regression input must be a single string Tensor") for m in logged)
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph = tf.saved_model.loader.load(sess, ["serve"], export_dir.decode())
        assert sorted(meta_graph.signature_def) == ["serving_default"]
        signature = meta_graph.signature_def["serving_default"]
        y = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: X[:2]})
    np.testing.assert_allclose(y, X[:2] @ trained.get_variable_value("w"), rtol=1e-6)


def test_export_needs_a_checkpoint(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="Couldn't find trained model at"):
        est.export_saved_model(str(tmp_path / "export"), raw_receiver())


def test_final_exporter_in_train_and_evaluate(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"),
                                 config=tf.estimator.RunConfig(save_checkpoints_steps=2))
    data = tf.estimator.inputs.numpy_input_fn({"x": X}, X.sum(1, keepdims=True), batch_size=2, num_epochs=None,
                                              shuffle=False)
    exporter = tf.estimator.FinalExporter("final", raw_receiver())
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(data, max_steps=4),
        tf.estimator.EvalSpec(data, steps=1, exporters=[exporter], throttle_secs=0))
    assert metrics["global_step"] == 4
    (export_dir,) = exports
    assert os.path.dirname(export_dir) == os.fsencode(tmp_path / "model" / "export" / "final")


_SERVE_IN_TF = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph = tf.saved_model.loader.load(sess, ["serve"], sys.argv[1])
        signature = meta_graph.signature_def["serving_default"]
        x = np.array(json.loads(sys.argv[2]), np.float32)
        y = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: x})
    print(json.dumps(y.tolist()))
""")


@pytest.mark.skipif(tf_python() is None, reason="no interpreter with TensorFlow: set TENSORWEAVE_TF_PYTHON to one "
                                                 "(TensorFlow is never a dependency of Tensorweave's tests)")
def test_real_tensorflow_serves_the_export(trained, tmp_path):
    export_dir = trained.export_saved_model(str(tmp_path / "export"), raw_receiver()).decode()
    served = run_in_tf(_SERVE_IN_TF, export_dir, json.dumps(X[2:].tolist()))
    np.testing.assert_allclose(served, X[2:] @ trained.get_variable_value("w"), rtol=1e-6)
