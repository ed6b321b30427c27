"""The digits CNN as a tf.estimator model, written as a TF1 user writes it: a model_fn, numpy input_fns,
tf.estimator.train_and_evaluate, then a SavedModel exported for serving and served by loading it back.

    python examples/digits_estimator.py [--epochs N] [--model_dir DIR]
    tensorweave-board --logdir runs/digits_estimator     # loss, global_step/sec, eval accuracy

The network is examples/digits_cnn.py's (two 3x3 convolutions, max pooling, a dense layer with dropout, 10
logits), trained with Adam on scikit-learn's 1,437 training digits and evaluated on the 360 held out after
every epoch's checkpoint. The export parses serialized tf.train.Example protos (``image``: 64 floats), so a
client sends Examples; the served classes are compared with Estimator.predict's.
"""

import os

import numpy as np

import digits_cnn
import digits_training
import tensorweave as tf

flags = tf.app.flags
flags.DEFINE_string("model_dir", "runs/digits_estimator", "Where checkpoints, summaries and the export go.")
flags.DEFINE_integer("epochs", 10, "Passes over the training set.")
flags.DEFINE_integer("batch_size", 32, "Examples per training step.")
flags.DEFINE_float("learning_rate", 0.002, "Adam's learning rate.")
flags.DEFINE_integer("seed", 0, "Seed of the split and the initial weights.")
FLAGS = flags.FLAGS

FEATURE_SPEC = {"image": tf.FixedLenFeature([8, 8, 1], tf.float32)}


def model_fn(features, labels, mode, params):
    logits = digits_cnn.network(features["image"], training=mode == tf.estimator.ModeKeys.TRAIN)
    probabilities = tf.nn.softmax(logits)
    predictions = {"classes": tf.argmax(logits, 1), "probabilities": probabilities}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs={
            "serving_default": tf.estimator.export.PredictOutput(predictions),
            "classification": tf.estimator.export.ClassificationOutput(scores=probabilities)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf.train.AdamOptimizer(params["learning_rate"]).minimize(loss, global_step=tf.train.get_global_step())
    accuracy = tf.metrics.accuracy(labels=labels, predictions=predictions["classes"])
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": accuracy})


def serialized_examples(images):
    return [tf.train.Example(features=tf.train.Features(feature={
        "image": tf.train.Feature(float_list=tf.train.FloatList(value=image.ravel()))})).SerializeToString()
        for image in images]


def serve(export_dir, images):
    """Loads the SavedModel into a fresh graph and runs its default signature on serialized Examples."""
    with tf.Session(graph=tf.Graph()) as sess:
        meta_graph = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
        signature = meta_graph.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        examples = signature.inputs["examples"].name
        classes = signature.outputs["classes"].name
        return sess.run(classes, {examples: serialized_examples(images)})


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    train_x, test_x, train_y, test_y = digits_training.load_data(FLAGS.seed)
    steps_per_epoch = -(-len(train_x) // FLAGS.batch_size)
    config = tf.estimator.RunConfig(tf_random_seed=FLAGS.seed, save_checkpoints_steps=steps_per_epoch,
                                    log_step_count_steps=steps_per_epoch, save_summary_steps=10)
    estimator = tf.estimator.Estimator(model_fn, model_dir=FLAGS.model_dir, config=config,
                                       params={"learning_rate": FLAGS.learning_rate})
    train_input = tf.estimator.inputs.numpy_input_fn({"image": train_x}, train_y, batch_size=FLAGS.batch_size,
                                                     num_epochs=None, shuffle=True)
    eval_input = tf.estimator.inputs.numpy_input_fn({"image": test_x}, test_y, batch_size=120, shuffle=False)
    metrics, _ = tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(train_input, max_steps=FLAGS.epochs * steps_per_epoch),
        tf.estimator.EvalSpec(eval_input, steps=None, throttle_secs=0))
    print(f"step {metrics['global_step']}: test accuracy {metrics['accuracy']:.4f}, test loss {metrics['loss']:.4f}")

    receiver_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(FEATURE_SPEC)
    export_dir = estimator.export_saved_model(os.path.join(FLAGS.model_dir, "export"), receiver_fn).decode()
    predicted = np.array([p["classes"] for p in estimator.predict(
        tf.estimator.inputs.numpy_input_fn({"image": test_x}, batch_size=120, shuffle=False))])
    served = serve(export_dir, test_x)
    print(f"exported {export_dir}; served accuracy {np.mean(served == test_y):.4f}, "
          f"{np.sum(served == predicted)}/{len(served)} served classes equal Estimator.predict's")


if __name__ == "__main__":
    tf.app.run(main)
