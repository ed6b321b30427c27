"""tf.examples.tutorials.mnist.input_data on small files in MNIST's own format (gzip'd IDX) made here."""

import gzip
import struct

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.examples.tutorials.mnist import input_data

N_TRAIN, N_TEST, SIDE = 30, 10, 28


def _write_idx(folder, n_train=N_TRAIN, n_test=N_TEST):
    """The four MNIST files: image i has pixel (0, 0) = i and pixel (1, 1) = 255; label i is i % 10."""
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = np.zeros((n, SIDE, SIDE), np.uint8)
        images[:, 0, 0] = np.arange(n)
        images[:, 1, 1] = 255
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, SIDE, SIDE) + images.tobytes())
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 2049, n) + (np.arange(n) % 10).astype(np.uint8).tobytes())


@pytest.fixture
def mnist_dir(tmp_path):
    _write_idx(tmp_path)
    return tmp_path


def _ids(images):
    """Which example each flattened float image is (pixel 0 holds its index / 255)."""
    return np.rint(images[:, 0] * 255).astype(int).tolist()


def test_reads_splits_and_scales(mnist_dir, capsys):
    data = tf.examples.tutorials.mnist.input_data.read_data_sets(str(mnist_dir), validation_size=5)
    assert "Extracting" in capsys.readouterr().out
    assert isinstance(data, input_data.Datasets)
    assert (data.train.num_examples, data.validation.num_examples, data.test.num_examples) == (25, 5, 10)
    assert data.train.images.shape == (25, 784) and data.train.images.dtype == np.float32
    assert data.train.images[:, 29].tolist() == [1.0] * 25  # 255 scaled to 1
    assert _ids(data.validation.images) == list(range(5)) and _ids(data.train.images) == list(range(5, 30))
    assert data.train.labels.dtype == np.uint8 and data.train.labels.tolist() == [i % 10 for i in range(5, 30)]


def test_one_hot_uint8_and_unflattened(mnist_dir):
    data = input_data.read_data_sets(str(mnist_dir), one_hot=True, dtype=tf.uint8, reshape=False,
                                     validation_size=0)
    assert data.train.images.shape == (30, SIDE, SIDE, 1) and data.train.images.dtype == np.uint8
    assert data.train.labels.shape == (30, 10) and data.train.labels.dtype == np.float64
    assert data.train.labels.argmax(1).tolist() == [i % 10 for i in range(30)]
    with pytest.raises(ValueError, match="Validation size should be between 0 and 30. Received: 31."):
        input_data.read_data_sets(str(mnist_dir), validation_size=31)
    with pytest.raises(TypeError, match="Invalid image dtype"):
        input_data.read_data_sets(str(mnist_dir), dtype=tf.int32, validation_size=0)


def test_next_batch_order_for_a_seed_follows_tf1(mnist_dir):
    """TF1 seeds numpy's global generator with ``seed`` in each DataSet, then shuffles at each epoch start."""
    data = input_data.read_data_sets(str(mnist_dir), validation_size=5, seed=7)
    rng = np.random.RandomState(7)
    first = np.arange(25)
    rng.shuffle(first)
    second = np.arange(25)
    rng.shuffle(second)
    order1 = (first + 5).tolist()
    order2 = [order1[i] for i in second]
    batches = [data.train.next_batch(10) for _ in range(3)]
    assert [_ids(images) for images, _ in batches] == [order1[:10], order1[10:20], order1[20:] + order2[:5]]
    assert batches[2][1].tolist() == [i % 10 for i in order1[20:] + order2[:5]]
    assert data.train.epochs_completed == 1
    assert _ids(data.train.next_batch(5)[0]) == order2[5:10]


def test_graph_seed_seeds_the_shuffle_and_unshuffled_batches_keep_order(mnist_dir):
    tf.set_random_seed(3)
    data = input_data.read_data_sets(str(mnist_dir), validation_size=5)
    perm = np.arange(25)
    np.random.RandomState(3).shuffle(perm)
    assert _ids(data.train.next_batch(4)[0]) == (perm[:4] + 5).tolist()
    plain = input_data.read_data_sets(str(mnist_dir), validation_size=5).test
    assert [_ids(plain.next_batch(4, shuffle=False)[0]) for _ in range(3)] == [
        [0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]


def test_fake_data():
    data = input_data.read_data_sets("unused", fake_data=True, one_hot=True)
    images, labels = data.train.next_batch(3, fake_data=True)
    assert data.train.num_examples == 10000
    assert np.shape(images) == (3, 784) and labels == [[1] + [0] * 9] * 3


def test_downloads_only_missing_files(tmp_path, capsys):
    source = tmp_path / "mirror"
    source.mkdir()
    _write_idx(source)
    train_dir = tmp_path / "data"
    train_dir.mkdir()
    (train_dir / "t10k-labels-idx1-ubyte.gz").write_bytes((source / "t10k-labels-idx1-ubyte.gz").read_bytes())
    data = input_data.read_data_sets(str(train_dir), validation_size=5, source_url=f"file://{source}/")
    out = capsys.readouterr().out
    assert out.count("Successfully downloaded") == 3 and "t10k-labels" not in out.split("Extracting")[0]
    assert data.test.num_examples == 10 and sorted(p.name for p in train_dir.iterdir()) == sorted(input_data.FILES)


def test_offline_error_says_what_to_put_where(tmp_path):
    with pytest.raises(OSError) as info:
        input_data.read_data_sets(str(tmp_path / "MNIST_data"), source_url=f"file://{tmp_path}/no-mirror/")
    message = str(info.value)
    for name in input_data.FILES:
        assert name in message
    assert str(tmp_path / "MNIST_data") in message and f"file://{tmp_path}/no-mirror/" in message


def test_bad_magic_number(tmp_path):
    _write_idx(tmp_path)
    with gzip.open(tmp_path / "train-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 2049, 1, 1, 1) + b"\0")
    with pytest.raises(ValueError, match="Invalid magic number 2049 in MNIST image file"):
        input_data.read_data_sets(str(tmp_path))
