"""tf.gfile beyond local paths: fsspec file systems (memory:// needs no network), missing backends, paths
given as pathlib/bytes/file:// URLs, and copies across file systems."""

import importlib.util
import uuid

import pytest

import tensorweave as tf


@pytest.fixture
def mem():
    """A fresh memory:// folder, removed afterwards (fsspec's memory file system is process-wide)."""
    root = f"memory://tw-{uuid.uuid4().hex}"
    tf.gfile.MakeDirs(root)
    yield root
    tf.gfile.DeleteRecursively(root)


def test_memory_file_system_round_trip(mem):
    with tf.gfile.GFile(f"{mem}/sub/a.txt", "w") as f:
        f.write("one\ntwo\n")
    with tf.gfile.GFile(f"{mem}/b.bin", "wb") as f:
        f.write(b"\x00\x01")
    assert tf.gfile.Exists(f"{mem}/sub/a.txt") and not tf.gfile.Exists(f"{mem}/nope")
    assert tf.gfile.IsDirectory(f"{mem}/sub") and not tf.gfile.IsDirectory(f"{mem}/b.bin")
    assert list(tf.gfile.GFile(f"{mem}/sub/a.txt")) == ["one\n", "two\n"]
    assert tf.gfile.GFile(f"{mem}/b.bin", "rb").read() == b"\x00\x01"
    assert sorted(tf.gfile.ListDirectory(mem)) == ["b.bin", "sub"]
    assert tf.gfile.Glob(f"{mem}/*.bin") == [f"{mem}/b.bin"]
    stat = tf.gfile.Stat(f"{mem}/sub/a.txt")
    assert (stat.length, stat.is_directory) == (8, False) and stat.mtime_nsec > 0
    assert [(d, sorted(s), sorted(f)) for d, s, f in tf.gfile.Walk(mem)] == [
        (mem, ["sub"], ["b.bin"]), (f"{mem}/sub", [], ["a.txt"])]


def test_memory_file_system_errors_are_tf_errors(mem):
    with pytest.raises(tf.errors.NotFoundError, match="; No such file or directory"):
        tf.gfile.GFile(f"{mem}/missing").read()
    with pytest.raises(tf.errors.NotFoundError, match="Could not find directory"):
        tf.gfile.ListDirectory(f"{mem}/missing")
    tf.gfile.MakeDirs(f"{mem}/d")
    with pytest.raises(tf.errors.FailedPreconditionError, match="Is a directory"):
        tf.gfile.Remove(f"{mem}/d")
    tf.gfile.GFile(f"{mem}/x", "w").write("x")
    with pytest.raises(tf.errors.AlreadyExistsError, match="file already exists"):
        tf.gfile.Rename(f"{mem}/x", f"{mem}/x")
    tf.gfile.Rename(f"{mem}/x", f"{mem}/y")
    assert not tf.gfile.Exists(f"{mem}/x") and tf.gfile.GFile(f"{mem}/y").read() == "x"


def test_copy_and_rename_across_file_systems(mem, tmp_path):
    local = tmp_path / "model.ckpt"
    local.write_bytes(b"weights")
    tf.gfile.Copy(str(local), f"{mem}/model.ckpt")
    assert tf.gfile.GFile(f"{mem}/model.ckpt", "rb").read() == b"weights"
    tf.gfile.Rename(f"{mem}/model.ckpt", str(tmp_path / "back.ckpt"))
    assert (tmp_path / "back.ckpt").read_bytes() == b"weights" and not tf.gfile.Exists(f"{mem}/model.ckpt")
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.Copy(str(local), str(tmp_path / "back.ckpt"))


@pytest.mark.skipif(importlib.util.find_spec("s3fs") is not None, reason="s3fs is installed here")
def test_missing_fsspec_backend_names_the_package():
    with pytest.raises(tf.errors.UnimplementedError) as info:
        tf.gfile.Exists("s3://bucket/key")
    message = str(info.value)
    assert message.startswith("File system scheme 's3' not implemented (file: 's3://bucket/key')")
    assert "s3fs" in message


def test_path_forms(tmp_path):
    (tmp_path / "a.txt").write_text("hi")
    assert tf.gfile.Exists(tmp_path / "a.txt")
    assert tf.gfile.Exists(str(tmp_path / "a.txt").encode())
    assert tf.gfile.GFile(f"file://{tmp_path}/a.txt").read() == "hi"
    assert tf.io.gfile.glob(str(tmp_path / "*.txt")) == [str(tmp_path / "a.txt")]


def test_gfile_read_write_modes(tmp_path):
    path = str(tmp_path / "f.txt")
    with tf.gfile.GFile(path, "w+") as f:
        f.write("abc")
        f.seek(0)
        assert f.read() == "abc"
    with tf.gfile.GFile(path, "r+") as f:
        assert f.read(1) == "a"
        f.seek(position=2)
        assert f.read() == "c"
    with tf.gfile.GFile(path, "a+") as f:
        f.write("d")
    assert tf.gfile.GFile(path).read() == "abcd"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid whence argument: 3"):
        tf.gfile.GFile(path).seek(0, 3)


def test_gfile_reads_again_after_close_as_tf_does(tmp_path):
    (tmp_path / "f.txt").write_text("abc")
    f = tf.gfile.GFile(str(tmp_path / "f.txt"))
    assert f.read(2) == "ab"
    f.close()
    assert f.read() == "abc"
