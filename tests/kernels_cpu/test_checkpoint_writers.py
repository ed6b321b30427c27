"""Checkpoints with other writers around: two processes saving into one directory, saves killed part-way
(what they leave behind and who removes it), and latest_checkpoint never naming a damaged checkpoint."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import zlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats import checkpoint_files, checkpoint_format, checkpoint_reader

# A process that saves steps 1..N of a variable holding tag*1000 + step, once the test says go; it prints each
# save (or the error of the one that failed, and stops) and waits for the test to close its stdin before exiting,
# so the other writer it raced with is still alive while the test looks. Two of these in step with each other
# left 0 of 5 checkpoints restorable and latest_checkpoint None before writers were kept apart.
_WRITER = textwrap.dedent("""
    import os, sys
    import numpy as np
    import tensorweave as tf
    save_path, tag, steps, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    v = tf.Variable(np.zeros(20_000), name="v")
    value = tf.placeholder(tf.float64, [])
    assign = v.assign(tf.fill([20_000], value))
    saver = tf.train.Saver([v], max_to_keep=5)
    print("ready", flush=True)
    while not os.path.exists(go):
        pass
    with tf.Session() as sess:
        for step in range(1, steps + 1):
            sess.run(assign, {value: tag * 1000.0 + step})
            try:
                saver.save(sess, save_path, global_step=step)
            except Exception as e:
                print("error", type(e).__name__, str(e).replace("\\n", " "), flush=True)
                break
            print("saved", step, flush=True)
    print("done", flush=True)
    sys.stdin.read()
""")


def _race(tmp_path, save_paths, steps=40):
    """Runs one writer per save path, started together; returns [(pid, output lines)] once all have finished."""
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, str(script), path, str(tag), str(steps), str(go)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for tag, path in enumerate(save_paths, 1)]
    outputs = []
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        go.write_text("")
        for proc in procs:
            lines = []
            while not lines or lines[-1] != "done":
                line = proc.stdout.readline()
                assert line, f"a writer exited early:\n{proc.stderr.read()}"
                lines.append(line.strip())
            outputs.append((proc.pid, lines))
    finally:
        for proc in procs:
            proc.stdin.close()
            proc.wait(30)
    return outputs


def _value_of(prefix):
    values = tf.train.load_variable(prefix, "v")
    assert np.all(values == values[0]), prefix
    return int(values[0])


def test_a_second_process_saving_the_same_checkpoints_fails_at_its_first_save_naming_the_first(tmp_path):
    directory = tmp_path / "ckpt"
    directory.mkdir()
    outputs = _race(tmp_path, [str(directory / "model.ckpt")] * 2)
    finished = [(pid, lines) for pid, lines in outputs if lines[-2] == "saved 40"]
    failed = [(pid, lines) for pid, lines in outputs if lines[-2].startswith("error")]
    assert len(finished) == 1 and len(failed) == 1, outputs
    (winner, _), (_, lines) = finished[0], failed[0]
    assert len(lines) == 2, "the second writer must fail at its first save, before writing anything"
    assert lines[0].startswith("error AlreadyExistsError")
    assert f"pid {winner} on host {os.uname().nodename}" in lines[0] and "model.ckpt" in lines[0]
    tag = outputs.index(finished[0]) + 1
    state = tf.train.get_checkpoint_state(str(directory))
    assert state.all_model_checkpoint_paths == [str(directory / f"model.ckpt-{s}") for s in range(36, 41)]
    assert [_value_of(p) for p in state.all_model_checkpoint_paths] == [tag * 1000 + s for s in range(36, 41)]
    assert tf.train.latest_checkpoint(str(directory)) == str(directory / "model.ckpt-40")
    assert sorted(p.name for p in directory.glob("*.index")) == sorted(f"model.ckpt-{s}.index" for s in range(36, 41))


def test_two_processes_saving_different_checkpoints_into_one_directory_both_keep_theirs(tmp_path):
    directory = tmp_path / "ckpt"
    directory.mkdir()
    outputs = _race(tmp_path, [str(directory / "a.ckpt"), str(directory / "b.ckpt")])
    for _, lines in outputs:
        assert lines[-2] == "saved 40", lines
    state = tf.train.get_checkpoint_state(str(directory))
    kept = {str(directory / f"{name}.ckpt-{s}") for name in "ab" for s in range(36, 41)}
    assert set(state.all_model_checkpoint_paths) == kept, "the state file lost the other writer's entries"
    assert state.model_checkpoint_path == state.all_model_checkpoint_paths[-1]
    assert state.model_checkpoint_path in {str(directory / "a.ckpt-40"), str(directory / "b.ckpt-40")}
    for prefix in kept:
        tag = 1 if os.path.basename(prefix).startswith("a") else 2
        assert _value_of(prefix) == tag * 1000 + int(prefix.rsplit("-", 1)[1])
    assert {str(directory / p.name[:-len(".index")]) for p in directory.glob("*.index")} == kept
    assert tf.train.latest_checkpoint(str(directory)) == state.model_checkpoint_path


def test_deleting_an_old_checkpoint_leaves_another_writers_files_of_that_prefix(sess, tmp_path):
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        saver = tf.train.Saver({"x": tf.constant(np.arange(3.0))}, max_to_keep=1)
        first = saver.save(sess, str(tmp_path / "m"), global_step=1)
        in_flight = checkpoint_files.temp_path(first + ".data-00000-of-00001-0123abcd", pid=writer.pid)
        with open(in_flight, "wb") as f:
            f.write(b"another process is writing m-1 again")
        saver.save(sess, str(tmp_path / "m"), global_step=2)
        assert not tf.train.checkpoint_exists(first)
        assert os.path.exists(in_flight)
    finally:
        writer.kill()
        writer.wait()


# ---- saves killed part-way -------------------------------------------------------------------------------
# A process that saves checkpoint m-1, then dies (SIGKILL) at the commit step of m-2 that ``kill_at`` names.
_KILLED = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    import tensorweave as tf
    from tensorweave.formats import checkpoint_format
    prefix, kill_at, sharded = sys.argv[1], sys.argv[2], sys.argv[3] == "sharded"
    with tf.device("/cpu:0"):
        a = tf.Variable(np.ones(300_000), name="a")
    with tf.device("/cpu:1"):
        b = tf.Variable(np.ones(1000), name="b")
    saver = tf.train.Saver(sharded=sharded)
    real_commit = checkpoint_format.commit

    def commit(tmp, path):
        if os.sep + "m-2" in path and kill_at in path:
            os.kill(os.getpid(), signal.SIGKILL)
        real_commit(tmp, path)

    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, prefix, global_step=1)
        checkpoint_format.commit = commit
        saver.save(sess, prefix, global_step=2)
""")


def _killed_save(tmp_path, kill_at, sharded=False):
    script = tmp_path / "killed.py"
    script.write_text(_KILLED)
    directory = tmp_path / "ckpt"
    directory.mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, str(script), str(directory / "m"), kill_at,
                           "sharded" if sharded else "plain"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return directory


def _files_of(directory, prefixes):
    """Every file a checkpoint directory should hold for the checkpoints ``prefixes`` (and nothing else)."""
    names = {"checkpoint"}
    for prefix in prefixes:
        tf.train.NewCheckpointReader(str(directory / prefix)).verify()
        index = json.loads((directory / f"{prefix}.index").read_text())
        names |= {f"{prefix}.index", f"{prefix}.meta"} | {s["file"] for s in index["body"]["shards"].values()}
    return names


def _listing(directory):
    return {f for f in os.listdir(directory) if not f.endswith(checkpoint_files.LOCK_SUFFIX)}


@pytest.mark.parametrize("kill_at,sharded", [(".data-", False), (".index", False), (".data-", True)],
                         ids=["writing-data", "committing-index", "sharded"])
def test_the_next_save_removes_what_a_killed_save_left(tmp_path, kill_at, sharded):
    directory = _killed_save(tmp_path, kill_at, sharded)
    left = _listing(directory) - _files_of(directory, ["m-1"])
    assert left, "the killed save left nothing: the test does not kill where it means to"
    assert tf.train.latest_checkpoint(str(directory)) == str(directory / "m-1")
    with tf.Graph().as_default():
        saver = tf.train.Saver({"a": tf.constant(np.ones(300_000)), "b": tf.constant(np.ones(1000))})
        with tf.Session() as sess:
            saver.save(sess, str(directory / "m"), global_step=3)
    assert _listing(directory) == _files_of(directory, ["m-1", "m-3"])


def test_whoever_takes_the_directory_lock_next_undoes_a_commit_its_writer_died_in(tmp_path):
    directory = _killed_save(tmp_path, ".index")
    assert any(f.startswith("m-2.data-") and ".tempstate" not in f for f in os.listdir(directory))
    tf.train.update_checkpoint_state(str(directory), str(directory / "m-1"))  # no save: only the state file
    assert _listing(directory) == _files_of(directory, ["m-1"])


def test_temporaries_of_live_writers_and_fresh_ones_of_other_hosts_are_kept(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    try:
        prefix = str(tmp_path / "m")
        live = checkpoint_files.temp_path(prefix + ".data-00000-of-00001-0000beef", pid=sleeper.pid)
        dead = checkpoint_files.temp_path(prefix + ".data-00000-of-00001-0000dead", pid=finished.pid)
        remote = checkpoint_files.temp_path(prefix + ".index", pid=finished.pid, host="some-other-host")
        remote_old = checkpoint_files.temp_path(prefix + ".meta", pid=finished.pid, host="some-other-host")
        legacy_old = prefix + ".index.tempstate" + "0" * 32
        for path in (live, dead, remote, remote_old, legacy_old):
            with open(path, "wb") as f:
                f.write(b"partial")
        long_ago = time.time() - checkpoint_files.STALE_AFTER_SECONDS - 60
        for path in (remote_old, legacy_old):
            os.utime(path, (long_ago, long_ago))
        with tf.Graph().as_default(), tf.Session() as sess:
            tf.train.Saver({"x": tf.constant(1.0)}).save(sess, str(tmp_path / "other"), global_step=1)
        assert os.path.exists(live) and os.path.exists(remote)
        assert not os.path.exists(dead) and not os.path.exists(remote_old) and not os.path.exists(legacy_old)
    finally:
        sleeper.kill()
        sleeper.wait()


# ---- latest_checkpoint verifies -------------------------------------------------------------------------
def test_latest_checkpoint_skips_a_checkpoint_with_a_same_size_bit_flip(sess, tmp_path):
    saver = tf.train.Saver({"x": tf.constant(np.arange(10_000.0))}, max_to_keep=3)
    prefixes = [saver.save(sess, str(tmp_path / "m"), global_step=s) for s in (1, 2, 3)]
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[2]
    data = tmp_path / next(f for f in os.listdir(tmp_path) if f.startswith("m-3.data-"))
    blob = bytearray(data.read_bytes())
    blob[len(blob) // 2] ^= 0x01
    data.write_bytes(bytes(blob))
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[1]
    with pytest.raises(tf.errors.DataLossError, match="corrupted"):
        tf.train.load_variable(prefixes[2], "x")
    blob[len(blob) // 2] ^= 0x01  # repaired in place (same size again): verified again, and found intact
    data.write_bytes(bytes(blob))
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[2]


def test_latest_checkpoint_reads_a_data_file_once_per_version(sess, tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint_reader, "_SETTLED_SECONDS", 0.0)  # remember a file's version at once
    checksummed = []  # sizes of the buffers checksummed: the index's body, and data files read whole

    class CountingZlib:
        @staticmethod
        def crc32(data, value=0):
            checksummed.append(len(data))
            return zlib.crc32(data, value)

    saver = tf.train.Saver({"x": tf.constant(np.arange(10_000.0))})
    prefixes = [saver.save(sess, str(tmp_path / "m"), global_step=s) for s in (1, 2)]
    data = tmp_path / next(f for f in os.listdir(tmp_path) if f.startswith("m-2.data-"))
    size = data.stat().st_size
    monkeypatch.setattr(checkpoint_reader, "zlib", CountingZlib)
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[1] and size in checksummed
    checksummed.clear()
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[1] and size not in checksummed
    time.sleep(0.05)  # past the file system's clock tick, so the write below changes the file's times
    blob = bytearray(data.read_bytes())
    blob[100] ^= 0x10
    data.write_bytes(bytes(blob))
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[0] and size in checksummed
