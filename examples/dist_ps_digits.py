"""Parameter-server training of an MLP on scikit-learn's 8x8 digits over MPI, asynchronous or synchronous.

    mpiexec -n 3 python -m mpi4py examples/dist_ps_digits.py --sync --backup 1
    mpiexec -n 3 python -m mpi4py examples/dist_ps_digits.py --async [--steps 400] [--logdir runs/dist_ps_digits/async]

The first ``--num-ps`` ranks are ps tasks that hold the variables and ``server.join()``; the other ranks are
workers that build the model under ``tf.train.replica_device_setter`` and train it through
``tf.train.MonitoredTrainingSession(master=server.target)``, worker 0 being the chief (it initializes or
restores the model, writes the checkpoints and shows the progress). With ``--async`` each worker applies its
own gradients as soon as it has them; with ``--sync`` a SyncReplicasOptimizer applies the mean of the first
``workers - backup`` fresh gradients of each step, so ``--backup`` slow workers never hold a step (the OSDI
paper's backup workers).
"""

import argparse
import os
import sys
import time

import numpy as np
from tqdm import tqdm

import tensorweave as tf
import tensorweave_distributed as twd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_training import accuracy_of, load_data  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--sync", action="store_true", help="synchronous replicas (SyncReplicasOptimizer)")
    mode.add_argument("--async", dest="async_", action="store_true",
                      help="each worker applies its own gradients (the default)")
    parser.add_argument("--backup", type=int, default=0,
                        help="with --sync: backup workers, whose gradients each step does not wait for (0)")
    parser.add_argument("--num-ps", type=int, default=1, help="ps tasks: the first ranks (1)")
    parser.add_argument("--steps", type=int, default=400, help="global steps to train (400)")
    parser.add_argument("--batch-size", type=int, default=32, help="examples per worker and step (32)")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--optimizer", choices=("sgd", "momentum", "adam"), default="momentum")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logdir", "--checkpoint-dir", dest="logdir", default=None,
                        help="the chief's checkpoints (default runs/dist_ps_digits/<async|sync|sync-backupB>); '' for none")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.backup and not args.sync:
        parser.error("--backup needs --sync: asynchronous workers never wait for each other")
    if args.logdir is None:
        mode = (f"sync-backup{args.backup}" if args.backup else "sync") if args.sync else "async"
        args.logdir = os.path.join("runs", "dist_ps_digits", mode)
    return args


def build_model(args, num_workers):
    """The digits MLP and its train op; ``opt`` is the SyncReplicasOptimizer with --sync, else None."""
    images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    hidden = tf.layers.dense(tf.layers.flatten(images), 128, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    base = {"sgd": lambda: tf.train.GradientDescentOptimizer(args.learning_rate),
            "momentum": lambda: tf.train.MomentumOptimizer(args.learning_rate, 0.9),
            "adam": lambda: tf.train.AdamOptimizer(args.learning_rate)}[args.optimizer]()
    sync = None
    if args.sync:
        sync = base = tf.train.SyncReplicasOptimizer(base, replicas_to_aggregate=num_workers - args.backup,
                                                     total_num_replicas=num_workers)
    global_step = tf.train.get_or_create_global_step()
    train_op = base.minimize(loss, global_step=global_step)
    return images, labels, loss, accuracy_of(logits, labels), train_op, global_step, sync


def main(argv=None):
    args = parse_args(argv)
    twd.init()
    cluster = tf.train.ClusterSpec.from_mpi(num_ps=args.num_ps)
    rank, num_workers = twd.rank(), cluster.num_tasks("worker")
    if args.sync and not 0 <= args.backup < num_workers:  # every rank stops, the ps tasks too
        raise SystemExit(f"--backup {args.backup}: with {num_workers} workers it must be in [0, {num_workers - 1}] "
                         f"(each step needs at least one worker's gradient); launch more ranks with mpiexec -n")
    job, task = ("ps", rank) if rank < args.num_ps else ("worker", rank - args.num_ps)
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    if job == "ps":
        server.join()  # serves the workers' steps until every worker process has ended
        return None
    is_chief = task == 0
    x_train, x_test, y_train, y_test = load_data(args.seed)
    tf.set_random_seed(args.seed)
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{task}")):
        images, labels, loss, accuracy, train_op, global_step, sync = build_model(args, num_workers)
    final = tf.train.FinalOpsHook({"accuracy": accuracy, "global_step": global_step}, {images: x_test, labels: y_test})
    hooks = [tf.train.StopAtStepHook(last_step=args.steps), final]
    if sync is not None:
        hooks.append(sync.make_session_run_hook(is_chief))
    rng = np.random.default_rng([args.seed, task])  # each worker draws its own batches
    resumed = is_chief and args.logdir and tf.train.latest_checkpoint(args.logdir)
    if resumed:
        print(f"resuming from {resumed} (remove {args.logdir} to train from scratch)", flush=True)
    start, loss_value, pushes = time.perf_counter(), float("nan"), 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks,
                                           checkpoint_dir=args.logdir or None, save_checkpoint_steps=100,
                                           save_summaries_steps=None, log_step_count_steps=0) as sess, \
            tqdm(total=args.steps, desc=f"ps {'sync' if sync else 'async'}", unit="step",
                 disable=args.quiet or not is_chief) as bar:
        # a worker whose session was ready only after the others had trained every step would push a gradient
        # fresh at the last step: one step too many. Reading the global step lets StopAtStepHook stop it first.
        sess.run(global_step)
        while not sess.should_stop():
            batch = rng.choice(len(x_train), args.batch_size, replace=False)
            released, loss_value, step = sess.run([train_op, loss, global_step], {images: x_train[batch],
                                                                                  labels: y_train[batch]})
            pushes += 1
            bar.set_postfix(loss=f"{loss_value:.3f}", refresh=False)
            bar.update(max(0, min(int(step), args.steps) - bar.n))
            # a sync step returns the global step its token carries: the next push would be fresh at that step,
            # one too many (StopAtStepHook's global step was read before this run waited for its token)
            if sync is not None and released >= args.steps:
                break
        bar.update(args.steps - bar.n)  # the loop ends only once the global step reached --steps
    test_accuracy, steps = final.final_ops_values["accuracy"], int(final.final_ops_values["global_step"])
    mode = f"sync, {num_workers - args.backup} of {num_workers} replicas" if sync else "async"
    print(f"worker {task} ({mode}): {pushes} pushes, global step {steps}, final loss {loss_value:.4f}, "
          f"held-out accuracy {test_accuracy:.4f} ({time.perf_counter() - start:.1f} s)", flush=True)
    return test_accuracy


if __name__ == "__main__":
    main(sys.argv[1:])
