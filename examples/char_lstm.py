"""A character-level LSTM language model, written as a TF1 user writes one: tf.nn.rnn_cell, tf.nn.dynamic_rnn,
tf.metrics for the validation numbers, and the final state fed back to sample text.

    python examples/char_lstm.py [--steps N] [--units U] [--seq_len T] [--batch_size B] [--sample_length L]

The text is the 43 KB of dataset descriptions that ship with scikit-learn (sklearn/datasets/descr/*.rst):
the first 90% to train on, the last 10% held out. Each step trains on a batch of windows of ``seq_len``
characters to predict each next character. Every ``eval_every`` steps the held-out text is read in windows
and tf.metrics.mean (the cross-entropy, whose exp is the perplexity) and tf.metrics.accuracy (the next
character's) accumulate over it, reset by tf.local_variables_initializer. At the end the model writes text,
one character at a time, carrying its LSTM state from one run to the next.
"""

from importlib import resources

import numpy as np

import tensorweave as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 500, "Training steps.")
flags.DEFINE_integer("units", 128, "LSTM units per layer.")
flags.DEFINE_integer("layers", 1, "Stacked LSTM layers (a MultiRNNCell when more than one).")
flags.DEFINE_integer("seq_len", 50, "Characters per training window.")
flags.DEFINE_integer("batch_size", 32, "Windows per step.")
flags.DEFINE_float("learning_rate", 0.005, "Adam's learning rate.")
flags.DEFINE_float("clip_norm", 5.0, "Gradients are clipped to this global norm.")
flags.DEFINE_integer("eval_every", 100, "Steps between evaluations on the held-out text.")
flags.DEFINE_integer("sample_length", 300, "Characters written at the end.")
flags.DEFINE_integer("seed", 0, "Seed of the weights, the batches and the sampling.")
FLAGS = flags.FLAGS


def load_text():
    folder = resources.files("sklearn.datasets.descr")
    return "".join(sorted(p.read_text(encoding="utf-8") for p in folder.iterdir() if p.name.endswith(".rst")))


def windows(codes, seq_len, starts):
    """Inputs and next-character targets of the windows starting at ``starts``."""
    index = np.asarray(starts)[:, None] + np.arange(seq_len + 1)
    chunk = codes[index]
    return chunk[:, :-1], chunk[:, 1:]


def make_cell():
    cells = [tf.nn.rnn_cell.LSTMCell(FLAGS.units) for _ in range(FLAGS.layers)]
    return cells[0] if FLAGS.layers == 1 else tf.nn.rnn_cell.MultiRNNCell(cells)


def build(vocab_size):
    chars = tf.placeholder(tf.int32, [None, None], name="chars")
    targets = tf.placeholder(tf.int32, [None, None], name="targets")
    cell = make_cell()
    batch = tf.shape(chars)[0]
    initial_state = cell.zero_state(batch, tf.float32)
    with tf.variable_scope("char_lstm"):
        embedding = tf.get_variable("embedding", [vocab_size, 64])
        outputs, final_state = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, chars),
                                                 initial_state=initial_state)
        logits = tf.layers.dense(outputs, vocab_size, name="logits")
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
    loss = tf.reduce_mean(losses)
    optimizer = tf.train.AdamOptimizer(FLAGS.learning_rate)
    gradients, variables = zip(*optimizer.compute_gradients(loss))
    gradients, _ = tf.clip_by_global_norm(gradients, FLAGS.clip_norm)
    global_step = tf.train.get_or_create_global_step()
    train_op = optimizer.apply_gradients(zip(gradients, variables), global_step=global_step)
    predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
    with tf.name_scope("held_out"):
        mean_loss, update_loss = tf.metrics.mean(losses)
        accuracy, update_accuracy = tf.metrics.accuracy(labels=targets, predictions=predictions)
    next_char = tf.multinomial(logits[:, -1], 1, seed=FLAGS.seed)
    return {"chars": chars, "targets": targets, "loss": loss, "train_op": train_op, "global_step": global_step,
            "metrics": (mean_loss, accuracy), "updates": (update_loss, update_accuracy),
            "initial_state": initial_state, "final_state": final_state, "next_char": next_char}


def evaluate(sess, model, codes):
    """Cross-entropy and accuracy over every held-out window, accumulated by tf.metrics."""
    sess.run(tf.local_variables_initializer())
    starts = np.arange(0, len(codes) - FLAGS.seq_len - 1, FLAGS.seq_len)
    for i in range(0, len(starts), 64):
        x, y = windows(codes, FLAGS.seq_len, starts[i:i + 64])
        sess.run(model["updates"], {model["chars"]: x, model["targets"]: y})
    return sess.run(model["metrics"])


def sample(sess, model, prime, length, vocab, lookup):
    """Writes ``length`` characters after ``prime``, feeding each run's final state back as the next
    run's initial state (a nested tuple of tensors fed as one key, as TF1 allows)."""
    state = sess.run(model["initial_state"], {model["chars"]: np.zeros((1, 1), np.int32)})
    text, codes = prime, [lookup[c] for c in prime]
    for _ in range(length):
        code, state = sess.run([model["next_char"], model["final_state"]],
                               {model["chars"]: np.array([codes], np.int32), model["initial_state"]: state})
        codes = [int(code[0, 0])]
        text += vocab[codes[0]]
    return text


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    text = load_text()
    vocab = sorted(set(text))
    lookup = {c: i for i, c in enumerate(vocab)}
    codes = np.array([lookup[c] for c in text], np.int32)
    split = int(len(codes) * 0.9)
    train, held_out = codes[:split], codes[split:]
    tf.logging.info("%d characters (%d to train on), %d distinct", len(codes), len(train), len(vocab))
    tf.set_random_seed(FLAGS.seed)
    model = build(len(vocab))
    rng = np.random.default_rng(FLAGS.seed)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        mean_loss, accuracy = evaluate(sess, model, held_out)
        tf.logging.info("step 0: held-out perplexity %.2f, next-character accuracy %.3f", np.exp(mean_loss), accuracy)
        for step in range(1, FLAGS.steps + 1):
            x, y = windows(train, FLAGS.seq_len, rng.integers(0, len(train) - FLAGS.seq_len - 1, FLAGS.batch_size))
            loss, _ = sess.run([model["loss"], model["train_op"]], {model["chars"]: x, model["targets"]: y})
            if step % FLAGS.eval_every == 0 or step == FLAGS.steps:
                mean_loss, accuracy = evaluate(sess, model, held_out)
                tf.logging.info("step %d: train loss %.3f; held-out perplexity %.2f, next-character accuracy %.3f",
                                step, loss, np.exp(mean_loss), accuracy)
        print(sample(sess, model, "The ", FLAGS.sample_length, vocab, lookup))
    print(f"final held-out perplexity {np.exp(mean_loss):.2f}, next-character accuracy {accuracy:.3f}")


if __name__ == "__main__":
    tf.app.run()
