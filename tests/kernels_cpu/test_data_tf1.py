"""tf.data pipelines against TF1's results: the programs of tests/fixtures/tf1/tf_data_programs.py, run by real
TensorFlow for the fixture and here by Tensorweave (values, orders, static shapes, error classes, and the
shuffle properties TF guarantees where its random order cannot be matched)."""

import importlib.util

import crc32c
import pytest
from tf1_fixtures import FOLDER, load

import tensorweave as tf


def _programs():
    spec = importlib.util.spec_from_file_location("tf_data_programs", FOLDER / "tf_data_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROGRAMS = _programs()
EXPECTED = load("tf_data")


class Files:
    def __init__(self, folder):
        self.dir = str(folder)
        self.write_tfrecords = PROGRAMS.write_tfrecords_with(crc32c.crc32c)


def test_every_program_has_a_fixture():
    assert sorted(PROGRAMS.PROGRAMS) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(PROGRAMS.PROGRAMS))
def test_program_matches_tf1(name, tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        run = PROGRAMS.PROGRAMS[name](tf, Files(tmp_path))
        with tf.Session(graph=graph) as sess:
            got = run(sess)
    assert got == EXPECTED[name]
