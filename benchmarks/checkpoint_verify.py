"""What ``tf.train.latest_checkpoint`` pays to verify a big checkpoint (it reads each data file once per
version and checks its CRC-32; later calls only look at the file's identity and times), against saving
and restoring the same checkpoint.

    .venv/bin/python -m benchmarks.checkpoint_verify [--megabytes 200] [--rounds 5]

Prints a table and writes bench-results/checkpoint_verify.json. "cold" drops the data file from the page
cache first (posix_fadvise DONTNEED), so it reads from the disk. (A script, not a module of the suite.)
"""

import argparse
import json
import os
import statistics
import tempfile
import time
import zlib


def _drop_from_page_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _median(fn, rounds, before=None):
    times = []
    for _ in range(rounds):
        if before:
            before()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="bench-results")
    args = parser.parse_args(argv)

    import tensorweave as tf
    from tensorweave.formats import checkpoint_format

    rows = {}
    with tempfile.TemporaryDirectory() as directory:
        with tf.Graph().as_default():  # an initializer op, not a constant: the meta graph stays small
            w = tf.get_variable("w", shape=[args.megabytes * (1 << 20) // 4], initializer=tf.random_normal_initializer())
            saver = tf.train.Saver([w], max_to_keep=1)
            with tf.Session() as sess:
                sess.run(w.initializer)
                rows["save (Saver.save, fsynced)"] = _median(
                    lambda: saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=1), args.rounds)
                prefix = tf.train.latest_checkpoint(directory)
                data = next(os.path.join(directory, f) for f in os.listdir(directory) if ".data-" in f)
                rows["restore (Saver.restore: read, verify, assign)"] = _median(
                    lambda: saver.restore(sess, prefix), args.rounds)
        time.sleep(checkpoint_format._SETTLED_SECONDS + 0.5)  # a fresh file is read on every call until then

        def verify_again():
            checkpoint_format._verified.clear()
            return tf.train.latest_checkpoint(directory)

        rows["latest_checkpoint, first call (reads + CRC-32), page cache warm"] = _median(verify_again, args.rounds)
        rows["latest_checkpoint, first call, cold (from disk)"] = _median(
            verify_again, args.rounds, before=lambda: _drop_from_page_cache(data))
        tf.train.latest_checkpoint(directory)
        rows["latest_checkpoint, later calls (the file unchanged)"] = _median(
            lambda: tf.train.latest_checkpoint(directory), args.rounds * 20)
        blob = open(data, "rb").read()
        rows["zlib.crc32 of the data in memory"] = _median(lambda: zlib.crc32(blob), args.rounds)
        size = os.path.getsize(data)
    print(f"checkpoint of {size / 1e6:.0f} MB (one float32 variable), medians of {args.rounds} rounds")
    for name, seconds in rows.items():
        print(f"  {name:66} {seconds * 1e3:10.2f} ms")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "checkpoint_verify.json"), "w") as f:
        json.dump({"bytes": size, "rounds": args.rounds, "seconds": rows}, f, indent=1)


if __name__ == "__main__":
    main()
