"""Data-parallel training of an MLP on scikit-learn's 8x8 digits, Horovod-style, over MPI.

    mpiexec -n 2 python -m mpi4py examples/dist_allreduce_digits.py [--steps 300] [--logdir runs/dist_digits]

Every rank builds the same graph and takes its rank-strided share of each global batch; the
DistributedOptimizer averages the gradients over the ranks before each update, so N ranks take the same
steps as one process on the whole global batch. Rank 0 writes the checkpoints (and summaries, with
tensorweave[board]); the BroadcastGlobalVariablesHook gives every rank rank 0's weights at the start,
restored from the last checkpoint when there is one.
"""

import argparse
import os
import sys
import time

import numpy as np

import tensorweave as tf
import tensorweave_distributed as twd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_training import load_data  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="global steps to train (300)")
    parser.add_argument("--global-batch-size", type=int, default=64,
                        help="examples per step over all ranks; a multiple of the number of ranks (64)")
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--optimizer", choices=("sgd", "momentum", "adam"), default="momentum")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logdir", default=os.path.join("runs", "dist_allreduce_digits"),
                        help="rank 0's checkpoints (default runs/dist_allreduce_digits); '' for none")
    parser.add_argument("--algorithm", default=None, choices=twd.ALGORITHMS, help="all-reduce algorithm (auto)")
    parser.add_argument("--compression", default="none", choices=("none", "fp16", "bf16"))
    parser.add_argument("--save-weights", default=None,
                        help="write each rank's final weights to this .npz path ('{rank}' is replaced)")
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)


def build_model(args):
    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    hidden = tf.layers.dense(tf.layers.flatten(images), 128, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
    base = {"sgd": lambda: tf.train.GradientDescentOptimizer(args.learning_rate),
            "momentum": lambda: tf.train.MomentumOptimizer(args.learning_rate, 0.9),
            "adam": lambda: tf.train.AdamOptimizer(args.learning_rate)}[args.optimizer]()
    optimizer = twd.DistributedOptimizer(base, compression=getattr(twd.Compression, args.compression),
                                         algorithm=args.algorithm)
    global_step = tf.train.get_or_create_global_step()
    train_op = optimizer.minimize(loss, global_step=global_step)
    return images, labels, loss, accuracy, train_op, global_step


def main(argv=None):
    args = parse_args(argv)
    twd.init()
    rank, size = twd.rank(), twd.size()
    x_train, x_test, y_train, y_test = load_data(args.seed)
    tf.set_random_seed(args.seed + rank)  # the ranks start apart on purpose: the broadcast hook aligns them
    images, labels, loss, accuracy, train_op, global_step = build_model(args)
    final = tf.train.FinalOpsHook({"accuracy": accuracy, "weights": tf.trainable_variables()},
                                  {images: x_test, labels: y_test})
    hooks = [twd.BroadcastGlobalVariablesHook(0), tf.train.StopAtStepHook(last_step=args.steps), final]
    checkpoint_dir = twd.chief_only(args.logdir or None)
    rng = np.random.default_rng(args.seed)  # seeded alike on every rank: the same global batches
    start, loss_value = time.perf_counter(), float("nan")
    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, hooks=hooks, save_checkpoint_steps=100,
                                           save_summaries_steps=None, log_step_count_steps=0) as sess:
        while not sess.should_stop():
            for batch in twd.shard_batches(len(x_train), args.global_batch_size, rng):
                if sess.should_stop():
                    break
                _, loss_value, step = sess.run([train_op, loss, global_step],
                                               {images: x_train[batch], labels: y_train[batch]})
                if not args.quiet and rank == 0 and step % 50 == 0:
                    print(f"step {step}: loss {loss_value:.4f}", flush=True)
    test_accuracy, weights = final.final_ops_values["accuracy"], final.final_ops_values["weights"]
    if args.save_weights:
        np.savez(args.save_weights.replace("{rank}", str(rank)),
                 **{v.op.name.replace("/", "__"): w for v, w in zip(tf.trainable_variables(), weights)})
    if rank == 0:
        print(f"{size} ranks, {args.steps} steps of {args.global_batch_size} examples: final loss {loss_value:.4f}, "
              f"held-out accuracy {test_accuracy:.4f} ({time.perf_counter() - start:.1f} s)", flush=True)
    return test_accuracy


if __name__ == "__main__":
    main(sys.argv[1:])
