"""tf.estimator's behaviour beyond the numbers (those are in test_estimator_tf1.py): TF 1.15's errors, logs,
model_fn/input_fn argument detection, summaries and checkpoints in model_dir, hooks and listeners."""

import glob
import logging
import os
import re

import numpy as np
import pytest

import tensorweave as tf

X = np.linspace(0, 1, 24, dtype=np.float32).reshape(8, 3)
Y = X.sum(1, keepdims=True)


def linear_fn(features, labels, mode):
    x = features["x"] if isinstance(features, dict) else features
    w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.2))
    pred = tf.matmul(x, w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=pred)
    loss = tf.losses.mean_squared_error(labels, pred)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def numpy_input(epochs=None, batch_size=4, with_labels=True):
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y if with_labels else None, batch_size=batch_size,
                                              num_epochs=epochs, shuffle=False)


def messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "tensorflow"]


# -- EstimatorSpec and RunConfig: TF's checks and messages ---------------------------------------------------
def test_estimator_spec_errors_are_tfs():
    loss = tf.constant(1.0)
    with pytest.raises(ValueError, match="^Missing train_op.$"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=loss)
    with pytest.raises(ValueError, match="^Missing loss.$"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL)
    with pytest.raises(ValueError, match="^Missing predictions.$"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT)
    with pytest.raises(ValueError, match="Loss must be scalar"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="loss must be Tensor, given: 3.0"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=3.0)
    with pytest.raises(TypeError, match="Values of eval_metric_ops must be \\(metric_value, update_op\\) tuples"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": loss})
    with pytest.raises(TypeError, match="All hooks must be SessionRunHook instances"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=loss, evaluation_hooks=[object()])
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(2.0)
    with pytest.raises(ValueError, match='loss with "Const(_[0-9]+)?:0" must be from the default graph'):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=foreign)


def test_estimator_spec_defaults_and_reshaped_loss():
    spec = tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.EVAL, loss=tf.constant([[1.5]]))
    assert spec.loss.shape.as_list() == [] and spec.predictions == {} and spec.eval_metric_ops == {}
    assert isinstance(spec.scaffold, tf.train.Scaffold) and spec.training_hooks == ()
    pred = tf.constant([[1.0]])
    spec = tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT, predictions={"p": pred})
    assert sorted(spec.export_outputs) == ["serving_default"]
    assert spec.export_outputs["serving_default"].outputs == {"p": pred}
    with pytest.raises(ValueError, match="mode of EstimatorSpec cannot be changed"):
        spec._replace(mode=tf.estimator.ModeKeys.TRAIN)


def test_run_config_defaults_checks_and_replace():
    config = tf.estimator.RunConfig()
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps) == (600, None)
    assert (config.save_summary_steps, config.keep_checkpoint_max, config.log_step_count_steps) == (100, 5, 100)
    assert config.is_chief and config.task_type == "worker" and config.num_worker_replicas == 1
    with pytest.raises(ValueError, match="`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set."):
        tf.estimator.RunConfig(save_checkpoints_steps=10, save_checkpoints_secs=10)
    with pytest.raises(ValueError, match="save_summary_steps should be >= 0"):
        tf.estimator.RunConfig(save_summary_steps=-1)
    with pytest.raises(ValueError, match="session_config must be instance of ConfigProto"):
        tf.estimator.RunConfig(session_config={})
    with pytest.raises(ValueError, match="log_step_count_steps should be > 0"):
        tf.estimator.RunConfig(log_step_count_steps=0)
    with pytest.raises(ValueError, match="save_checkpoints_steps should be >= 0"):
        config.replace(save_checkpoints_steps=-3)
    steps = config.replace(save_checkpoints_steps=7, tf_random_seed=4)
    assert (steps.save_checkpoints_steps, steps.save_checkpoints_secs, steps.tf_random_seed) == (7, None, 4)
    assert config.save_checkpoints_secs == 600  # replace copies
    with pytest.raises(ValueError, match="Replacing is_chief is not supported. Allowed properties are"):
        config.replace(is_chief=False)


def test_model_fn_arguments_are_checked_as_tf_does(caplog):
    with pytest.raises(ValueError, match="must include features argument"):
        tf.estimator.Estimator(lambda inputs, labels: None)
    with pytest.raises(ValueError, match="does not include params argument, but params"):
        tf.estimator.Estimator(lambda features: None, params={"a": 1})
    with pytest.raises(ValueError, match=r"has following not expected args: \['extra'\]"):
        tf.estimator.Estimator(lambda features, extra: None)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est = tf.estimator.Estimator(lambda features, params: None)
    logged = messages(caplog)
    assert "Using default config." in logged
    assert any(re.fullmatch(r"Using temporary folder as model directory: \S+", m) for m in logged)
    assert any("includes params argument, but params are not passed to Estimator" in m for m in logged)
    assert os.path.isdir(est.model_dir) and est.config.model_dir == est.model_dir
    with pytest.raises(ValueError, match="`model_dir` are set both in constructor and `RunConfig`"):
        tf.estimator.Estimator(linear_fn, model_dir="/tmp/a", config=tf.estimator.RunConfig(model_dir="/tmp/b"))


# -- training --------------------------------------------------------------------------------------------
@pytest.mark.needs_board
def test_train_logs_as_tf_and_writes_summaries_and_checkpoints(tmp_path, caplog):
    config = tf.estimator.RunConfig(save_checkpoints_steps=3, log_step_count_steps=2, save_summary_steps=2,
                                    keep_checkpoint_max=2)
    est = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path), config=config)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est.train(numpy_input(), steps=6)
    logged = messages(caplog)
    assert [m for m in logged if m.startswith("Saving checkpoints")] == [
        f"Saving checkpoints for {s} into {tmp_path}/model.ckpt." for s in (0, 3, 6)]
    loss_lines = [m for m in logged if m.startswith("loss = ")]
    assert re.fullmatch(r"loss = [\d.]+, step = 1", loss_lines[0])
    assert all(re.fullmatch(r"loss = [\d.]+, step = \d \(\d+\.\d{3} sec\)", m) for m in loss_lines[1:])
    assert [int(m.rsplit("step = ")[1].split()[0]) for m in loss_lines] == [1, 3, 5]
    assert sum(bool(re.fullmatch(r"global_step/sec: [\d.e+-]+", m)) for m in logged) == 2
    assert re.fullmatch(r"Loss for final step: [\d.]+\.", logged[-1])
    assert est.latest_checkpoint() == str(tmp_path / "model.ckpt-6")
    assert len(glob.glob(str(tmp_path / "model.ckpt-*.index"))) == 2  # keep_checkpoint_max
    tags = {}
    for path in glob.glob(str(tmp_path / "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(event.step)
    assert tags["loss"] == [1, 3, 5] and tags["global_step/sec"] == [3, 5]


def test_train_resumes_from_model_dir_and_skips_finished_max_steps(tmp_path, caplog):
    est = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path))
    est.train(numpy_input(), steps=3)
    est.train(numpy_input(), steps=2)
    assert est.get_variable_value("global_step") == 5
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        est.train(numpy_input(), max_steps=5)
    assert "Skipping training since max_steps has already saved." in messages(caplog)
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps."):
        est.train(numpy_input(), steps=1, max_steps=9)
    with pytest.raises(ValueError, match="Must specify steps > 0, given: 0"):
        est.train(numpy_input(), steps=0)


def test_train_until_input_ends_with_tensor_input_fn_and_listeners(tmp_path):
    saved = []

    class Listener(tf.train.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            saved.append(global_step_value)

    def input_fn():  # (features, labels) tensors, no Dataset: a one-shot iterator of 2 batches
        features, labels = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4).make_one_shot_iterator().get_next()
        return features, labels

    est = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(save_checkpoints_steps=1))
    est.train(input_fn, saving_listeners=[Listener()])
    assert est.get_variable_value("global_step") == 2 and saved == [0, 1, 2]
    est2 = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path / "b"),
                                  config=tf.estimator.RunConfig(save_checkpoints_steps=None,
                                                                save_checkpoints_secs=None))
    with pytest.raises(ValueError, match="There should be a CheckpointSaverHook to use saving_listeners"):
        est2.train(input_fn, saving_listeners=[Listener()])
    with pytest.raises(TypeError, match="saving_listeners must be a list of CheckpointSaverListener, given: 3"):
        est2.train(input_fn, saving_listeners=[3])


def test_input_fn_and_model_fn_get_params_mode_and_config(tmp_path):
    seen = []

    def model_fn(features, labels, mode, params, config):
        seen.append(("model_fn", mode, params["k"], config.model_dir))
        return linear_fn(features, labels, mode)

    def input_fn(params, mode, config):
        seen.append(("input_fn", mode, params["k"], config.model_dir))
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4)

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"k": 7})
    est.train(input_fn)
    assert seen == [("input_fn", "train", 7, str(tmp_path)), ("model_fn", "train", 7, str(tmp_path))]
    with pytest.raises(ValueError, match="model_fn does not take labels, but input_fn returns labels."):
        tf.estimator.Estimator(lambda features, mode: None).train(input_fn=lambda: (tf.constant(X), tf.constant(Y)))
    with pytest.raises(ValueError, match="input_fn should return \\(features, labels\\) as a len 2 tuple."):
        est.train(lambda: (tf.constant(X), tf.constant(Y), tf.constant(Y)))


def test_warm_start_from_another_model_dir(tmp_path):
    first = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path / "a"))
    first.train(numpy_input(), steps=4)
    second = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path / "b"), warm_start_from=str(tmp_path / "a"))
    second.train(numpy_input(), steps=1)
    cold = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path / "c"))
    cold.train(numpy_input(), steps=1)
    w_a, w_b, w_c = (e.get_variable_value("w") for e in (first, second, cold))
    assert second.get_variable_value("global_step") == 1  # only variables matching .* trainable ones are copied
    assert np.abs(w_b - w_a).max() < np.abs(w_c - w_a).max() / 5


# -- evaluation and prediction ------------------------------------------------------------------------------
@pytest.mark.needs_board
def test_evaluate_writes_eval_summaries_and_logs_the_dict(tmp_path, caplog):
    est = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path))
    est.train(numpy_input(), steps=2)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        results = est.evaluate(numpy_input(epochs=1, batch_size=3), name="holdout")
        est.evaluate(numpy_input(epochs=None), steps=2)
    assert sorted(results) == ["global_step", "loss"] and results["global_step"] == 2
    logged = messages(caplog)
    assert "Saving dict for global step 2: global_step = 2, loss = %s" % results["loss"] in logged
    assert "Evaluation [1/2]" in logged and "Evaluation [2/2]" in logged
    assert f"Restoring parameters from {tmp_path}/model.ckpt-2" in logged  # TF's Saver says which checkpoint
    for folder in ("eval_holdout", "eval"):
        (path,) = glob.glob(str(tmp_path / folder / "events.out.tfevents.*"))
        values = [(e.step, v.tag, v.simple_value) for e in tf.train.summary_iterator(path) for v in e.summary.value]
        assert [(s, t) for s, t, _ in values] == [(2, "loss")]
    with pytest.raises(ValueError, match="Must specify steps > 0, given: -1"):
        est.evaluate(numpy_input(), steps=-1)


def test_evaluate_and_predict_without_checkpoint_initialize(tmp_path, caplog):
    est = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path))
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        preds = list(est.predict(numpy_input(epochs=1, with_labels=False)))
    assert f"Could not find trained model in model_dir: {tmp_path}, running initialization to predict." in \
        messages(caplog)
    np.testing.assert_allclose(np.stack(preds), X @ np.full((3, 1), 0.2, np.float32), rtol=1e-6)
    with pytest.raises(ValueError, match="Could not find trained model in model_dir"):
        est.get_variable_names()
    metric_clash = lambda features, labels, mode: tf.estimator.EstimatorSpec(  # noqa: E731
        mode, loss=tf.constant(1.0), eval_metric_ops={"loss": (tf.constant(1.0), tf.no_op())})
    with pytest.raises(ValueError, match='Metric with name "loss" is not allowed'):
        tf.estimator.Estimator(metric_clash, model_dir=str(tmp_path)).evaluate(numpy_input(epochs=1))


def test_predict_keys_and_batches(tmp_path):
    def model_fn(features, mode):
        x = features["x"]
        return tf.estimator.EstimatorSpec(mode, predictions={"sum": tf.reduce_sum(x, 1), "x": x})

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    input_fn = numpy_input(epochs=1, batch_size=5, with_labels=False)
    singles = list(est.predict(input_fn, predict_keys=["sum"]))
    assert len(singles) == 8 and all(sorted(p) == ["sum"] for p in singles)
    np.testing.assert_allclose([p["sum"] for p in singles], X.sum(1), rtol=1e-6)
    batches = list(est.predict(input_fn, yield_single_examples=False))
    assert [b["x"].shape for b in batches] == [(5, 3), (3, 3)]
    with pytest.raises(ValueError, match="Expected to run at least one output from"):
        list(est.predict(input_fn, predict_keys=["nope"]))


# -- input functions ----------------------------------------------------------------------------------------
def test_numpy_input_fn_batches_and_errors():
    with pytest.raises(ValueError, match="shuffle must be provided and explicitly set as boolean"):
        tf.estimator.inputs.numpy_input_fn({"x": X})
    with pytest.raises(TypeError, match="x must be a dict or array; got list"):
        tf.estimator.inputs.numpy_input_fn([1, 2], shuffle=False)()
    with pytest.raises(ValueError, match="Length of tensors in x and y is mismatched"):
        tf.estimator.inputs.numpy_input_fn({"x": X}, Y[:3], shuffle=False)()
    with pytest.raises(ValueError, match="1 duplicate keys are found in both x and y"):
        tf.estimator.inputs.numpy_input_fn({"x": X}, {"x": Y}, shuffle=False)()
    features, labels = tf.estimator.inputs.numpy_input_fn(X, Y, batch_size=3, num_epochs=2, shuffle=False)()
    assert features.shape.as_list() == [None, 3]
    with tf.train.MonitoredSession() as sess:
        sizes = []
        while not sess.should_stop():
            f, l = sess.run([features, labels])
            np.testing.assert_allclose(f.sum(1, keepdims=True), l, rtol=1e-6)
            sizes.append(len(f))
    assert sizes == [3, 3, 3, 3, 3, 1]


def test_pandas_input_fn_needs_pandas():
    pytest.importorskip("pandas", reason="pandas is not installed: pandas_input_fn's own path is not tested")
    import pandas as pd
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1]})
    features, labels = tf.estimator.inputs.pandas_input_fn(frame, pd.Series(Y[:, 0]), batch_size=8,
                                                           shuffle=False)()
    with tf.train.MonitoredSession() as sess:
        f, l = sess.run([features, labels])
    np.testing.assert_allclose(f["a"], X[:, 0])
    np.testing.assert_allclose(l, Y[:, 0])


def test_pandas_input_fn_without_pandas_fails_as_tf(monkeypatch):
    from tensorweave.estimator.inputs import pandas_io
    monkeypatch.setattr(pandas_io, "pd", None)  # as where pandas is not installed
    with pytest.raises(TypeError, match="pandas_input_fn should not be called without pandas installed"):
        tf.estimator.inputs.pandas_input_fn(None, shuffle=False)


@pytest.mark.needs_board
def test_evaluate_writes_a_serialized_summary_metric_under_its_key(tmp_path):
    def model_fn(features, labels, mode):
        spec = linear_fn(features, labels, mode)
        if mode != tf.estimator.ModeKeys.EVAL:
            return spec
        summary = tf.summary.merge([tf.summary.scalar("a", 1.5), tf.summary.scalar("b", 2.5)])
        return spec._replace(eval_metric_ops={"both": (summary, tf.no_op())})

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(numpy_input(), steps=1)
    est.evaluate(numpy_input(epochs=1))
    (path,) = glob.glob(str(tmp_path / "eval" / "events.out.tfevents.*"))
    values = {v.tag: v.simple_value for e in tf.train.summary_iterator(path) for v in e.summary.value}
    assert values["both/0"] == 1.5 and values["both/1"] == 2.5 and "loss" in values


@pytest.mark.needs_board
def test_train_and_evaluate_throttles_and_checks_its_specs(tmp_path, caplog):
    with pytest.raises(TypeError, match="`input_fn` must be callable, given: 3"):
        tf.estimator.TrainSpec(3)
    with pytest.raises(ValueError, match="Must specify max_steps > 0, given: 0"):
        tf.estimator.TrainSpec(numpy_input(), max_steps=0)
    with pytest.raises(ValueError, match="Must specify throttle_secs >= 0, given: -1"):
        tf.estimator.EvalSpec(numpy_input(), throttle_secs=-1)
    with pytest.raises(TypeError, match="`exporters` must be an Exporter, an iterable of Exporter, or `None`"):
        tf.estimator.EvalSpec(numpy_input(), exporters=[object()])
    est = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(save_checkpoints_steps=2))
    with pytest.raises(TypeError, match="`train_spec` must have type `tf.estimator.TrainSpec`"):
        tf.estimator.train_and_evaluate(est, None, tf.estimator.EvalSpec(numpy_input()))
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        metrics, exports = tf.estimator.train_and_evaluate(
            est, tf.estimator.TrainSpec(numpy_input(), max_steps=6),
            tf.estimator.EvalSpec(numpy_input(epochs=1), steps=None, name="held", throttle_secs=1000))
    assert metrics["global_step"] == 6 and exports == []
    logged = messages(caplog)
    assert [m.split(":")[0] for m in logged if m.startswith("Saving dict")] == [
        "Saving dict for global step 2", "Saving dict for global step 6"]
    assert logged.count("Skip the current checkpoint eval due to throttle secs (1000 secs).") == 2  # steps 4, 6
    assert len(glob.glob(str(tmp_path / "eval_held" / "events.out.tfevents.*"))) == 1
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        again = tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(numpy_input(), max_steps=6),
                                                tf.estimator.EvalSpec(numpy_input(epochs=1)))
    assert again == (None, [])  # nothing trained, so nothing new to evaluate


@pytest.mark.needs_board
def test_the_dashboard_shows_training_and_evaluation_runs(tmp_path):
    from tensorweave_board.server.logdir import Logdir
    est = tf.estimator.Estimator(linear_fn, model_dir=str(tmp_path), config=tf.estimator.RunConfig(
        save_summary_steps=1, log_step_count_steps=1))
    est.train(numpy_input(), steps=3)
    est.evaluate(numpy_input(epochs=1), name="test")
    tf.summary.FileWriterCache.clear()
    logdir = Logdir(str(tmp_path))
    logdir.reload()
    runs = {name: run.tags() for name, run in logdir.runs.items()}
    assert {"loss", "global_step/sec"} <= set(runs["."]["scalars"]) and runs["."]["graph"]
    assert runs["eval_test"]["scalars"] == ["loss"]
    steps, _, values = logdir.runs["eval_test"].scalars["loss"].arrays()
    assert list(steps) == [3] and values[0] > 0
    assert tf.estimator.SummarySaverHook is tf.train.SummarySaverHook


def test_add_metrics_adds_to_evaluation_only(tmp_path):
    def model_fn(features, labels, mode):
        spec = linear_fn(features, labels, mode)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return spec
        (weights,) = tf.trainable_variables()
        return spec._replace(predictions={"y": tf.matmul(features["x"], weights)})

    def metric_fn(labels, predictions, config):
        assert isinstance(config, tf.estimator.RunConfig)
        return {"mse": tf.metrics.mean_squared_error(labels, predictions["y"])}

    with pytest.raises(ValueError, match=r"has following not expected args: \['mode'\]"):
        tf.estimator.add_metrics(tf.estimator.Estimator(model_fn), lambda labels, mode: {})
    base = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    base.train(numpy_input(), steps=2)
    extended = tf.estimator.add_metrics(base, metric_fn)
    assert extended.model_dir == base.model_dir
    metrics = extended.evaluate(numpy_input(epochs=1, batch_size=8))
    assert sorted(metrics) == ["global_step", "loss", "mse"]
    assert metrics["mse"] == pytest.approx(metrics["loss"], rel=1e-6)  # one batch: the MSE loss is the MSE


def test_model_fn_arguments_of_partials_methods_and_callables(tmp_path):
    import functools
    seen = []

    def with_scale(scale, features, labels, mode):
        seen.append(scale)
        return linear_fn(features, labels, mode)

    class Model:
        def __call__(self, features, labels, mode, params):
            seen.append(params["p"])
            return linear_fn(features, labels, mode)

        def method(self, features, labels, mode, config):
            seen.append(type(config).__name__)
            return linear_fn(features, labels, mode)

    tf.estimator.Estimator(functools.partial(with_scale, 3), str(tmp_path / "a")).train(numpy_input(), steps=1)
    tf.estimator.Estimator(Model(), str(tmp_path / "b"), params={"p": 5}).train(numpy_input(), steps=1)
    tf.estimator.Estimator(Model().method, str(tmp_path / "c")).train(numpy_input(), steps=1)
    assert seen == [3, 5, "RunConfig"]


def test_numpy_input_fn_shuffles_each_epoch_without_losing_rows():
    values = np.arange(10, dtype=np.float32)
    batch = tf.estimator.inputs.numpy_input_fn(values, batch_size=4, num_epochs=2, shuffle=True)()
    seen = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            seen.extend(sess.run(batch).tolist())
    assert sorted(seen) == sorted(values.tolist() * 2) and seen != values.tolist() * 2
