"""TF 1.x's MNIST reader: ``read_data_sets(train_dir, one_hot=...)`` -> ``Datasets(train, validation, test)``.

It reads the four gzip'd IDX files from ``train_dir`` and downloads only those that are missing. The
``DataSet`` batches as TF 1.x's does (shuffled at the start of each epoch with numpy's global generator,
seeded from ``seed`` or the graph seed by TF1's rules), so a seeded program sees the same batches.
"""

import collections
import gzip
import os
import tempfile
import urllib.error
import urllib.request

import numpy

from tensorweave import dtypes
from tensorweave.framework import random_seed
from tensorweave.io import gfile

__all__ = ["DataSet", "Datasets", "read_data_sets", "extract_images", "extract_labels", "dense_to_one_hot",
           "maybe_download", "DEFAULT_SOURCE_URL", "FILES"]

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
FILES = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _read32(stream):
    return int(numpy.frombuffer(stream.read(4), dtype=numpy.dtype(numpy.uint32).newbyteorder(">"))[0])


def _check_magic(stream, expected, what, name):
    magic = _read32(stream)
    if magic != expected:
        raise ValueError(f"Invalid magic number {magic} in MNIST {what} file: {name} (expected {expected}: "
                         f"is it the gzip'd IDX file from {DEFAULT_SOURCE_URL}?)")


def extract_images(f):
    """The images of a gzip'd IDX3 file object as a uint8 array [index, y, x, depth=1]."""
    print("Extracting", f.name)
    with gzip.GzipFile(fileobj=f) as stream:
        _check_magic(stream, 2051, "image", f.name)
        count, rows, cols = _read32(stream), _read32(stream), _read32(stream)
        data = numpy.frombuffer(stream.read(rows * cols * count), dtype=numpy.uint8)
        return data.reshape(count, rows, cols, 1)


def dense_to_one_hot(labels_dense, num_classes):
    """Class labels [n] as one-hot rows [n, num_classes] (float64, as TF 1.x's)."""
    labels_one_hot = numpy.zeros((labels_dense.shape[0], num_classes))
    labels_one_hot[numpy.arange(labels_dense.shape[0]), labels_dense.ravel()] = 1
    return labels_one_hot


def extract_labels(f, one_hot=False, num_classes=10):
    """The labels of a gzip'd IDX1 file object: uint8 [index], or one-hot float64 [index, num_classes]."""
    print("Extracting", f.name)
    with gzip.GzipFile(fileobj=f) as stream:
        _check_magic(stream, 2049, "label", f.name)
        count = _read32(stream)
        labels = numpy.frombuffer(stream.read(count), dtype=numpy.uint8)
        return dense_to_one_hot(labels, num_classes) if one_hot else labels


class DataSet:
    """Images and labels with TF 1.x's ``next_batch``: shuffled per epoch, the epoch's tail joined to the
    next epoch's head."""

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=dtypes.float32, reshape=True,
                 seed=None):
        seed1, seed2 = random_seed.get_seed(seed)
        numpy.random.seed(seed1 if seed is None else seed2)  # TF 1.x seeds numpy's global generator here
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype not in (dtypes.uint8, dtypes.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        if fake_data:
            self._num_examples = 10000
            self.one_hot = one_hot
        else:
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images and labels differ in length: images.shape: {images.shape} "
                                 f"labels.shape: {labels.shape}")
            self._num_examples = images.shape[0]
            if reshape:
                if images.shape[3] != 1:
                    raise ValueError(f"reshape=True flattens single-channel images; these have shape {images.shape}")
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == dtypes.float32:
                images = numpy.multiply(images.astype(numpy.float32), 1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self):
        return self._num_examples

    @property
    def epochs_completed(self):
        return self._epochs_completed

    def _shuffle(self):
        perm = numpy.arange(self._num_examples)
        numpy.random.shuffle(perm)
        self._images = self._images[perm]
        self._labels = self._labels[perm]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next ``batch_size`` (images, labels); crossing an epoch's end completes it from the next epoch."""
        if fake_data:
            fake_label = [1] + [0] * 9 if self.one_hot else 0
            return [[1] * 784 for _ in range(batch_size)], [fake_label for _ in range(batch_size)]
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch += batch_size
            return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]
        self._epochs_completed += 1
        images_rest, labels_rest = self._images[start:], self._labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = end = batch_size - (self._num_examples - start)
        return (numpy.concatenate((images_rest, self._images[:end]), axis=0),
                numpy.concatenate((labels_rest, self._labels[:end]), axis=0))


def _offline_help(train_dir, source_url, reason):
    present = [name for name in FILES if gfile.exists(os.path.join(train_dir, name))]
    missing = [name for name in FILES if name not in present]
    return (f"could not download MNIST into {train_dir!r} ({reason}). read_data_sets reads these four files "
            f"from that directory and downloads only the missing ones: {', '.join(FILES)}. Missing: "
            f"{', '.join(missing)}. Copy them there from a machine that can reach {source_url} (e.g. "
            f"{source_url}{missing[0] if missing else TRAIN_IMAGES}), keeping their names and gzip compression, "
            f"or pass source_url= a mirror (a file:// folder works).")


def maybe_download(filename, work_directory, source_url):
    """``work_directory/filename``, downloaded from ``source_url`` first if it is not there."""
    if not gfile.exists(work_directory):
        gfile.makedirs(work_directory)
    filepath = os.path.join(work_directory, filename)
    if gfile.exists(filepath):
        return filepath
    base_url = source_url[:-len(filename)] if source_url.endswith(filename) else source_url
    try:
        with urllib.request.urlopen(source_url, timeout=60) as response, tempfile.NamedTemporaryFile() as tmp:
            tmp.write(response.read())
            tmp.flush()
            gfile.copy(tmp.name, filepath)
    except (urllib.error.URLError, OSError) as exc:
        raise OSError(_offline_help(work_directory, base_url, exc)) from exc
    print("Successfully downloaded", filename, gfile.stat(filepath).length, "bytes.")
    return filepath


def _read(train_dir, name, source_url, extract, **kwargs):
    with gfile.GFile(maybe_download(name, train_dir, source_url + name), "rb") as f:
        return extract(f, **kwargs)


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=dtypes.float32, reshape=True,
                   validation_size=5000, seed=None, source_url=DEFAULT_SOURCE_URL):
    """MNIST from ``train_dir`` as ``Datasets(train, validation, test)``; the first ``validation_size``
    training examples are the validation set. Images are float32 in [0, 1] (uint8 with dtype=tf.uint8),
    flattened to 784 unless ``reshape=False``; labels are digits, or one-hot rows with ``one_hot``."""
    if fake_data:
        return Datasets(*(DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype, seed=seed)
                          for _ in range(3)))
    source_url = source_url or DEFAULT_SOURCE_URL
    train_images = _read(train_dir, TRAIN_IMAGES, source_url, extract_images)
    train_labels = _read(train_dir, TRAIN_LABELS, source_url, extract_labels, one_hot=one_hot)
    test_images = _read(train_dir, TEST_IMAGES, source_url, extract_images)
    test_labels = _read(train_dir, TEST_LABELS, source_url, extract_labels, one_hot=one_hot)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    train = DataSet(train_images[validation_size:], train_labels[validation_size:], **options)
    validation = DataSet(train_images[:validation_size], train_labels[:validation_size], **options)
    test = DataSet(test_images, test_labels, **options)
    return Datasets(train=train, validation=validation, test=test)
