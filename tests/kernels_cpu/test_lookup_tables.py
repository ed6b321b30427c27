"""Lookup tables as TF1 programs use them beyond the values (test_breadth_tf1.py): a table is a resource that lives
across Session.run calls, is unusable before its initializer ran, refuses a key with two values, and is
initialized by tf.tables_initializer() and by MonitoredSession's default Scaffold."""

import numpy as np
import pytest

import tensorweave as tf


def _table(keys=("a", "b"), values=(1, 2)):
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(list(keys), tf.constant(list(values),
                                                                                                  tf.int64)), -1)


def test_a_lookup_before_the_initializer_ran_is_a_failed_precondition():
    table = _table()
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
            s.run(table.lookup(tf.constant(["a"])))


def test_the_table_lives_across_runs_and_a_second_initialization_leaves_it():
    table = _table()
    init = tf.tables_initializer()
    assert tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS) == [table.initializer]
    with tf.Session() as s:
        s.run(init)
        s.run(init)
        for _ in range(2):
            np.testing.assert_array_equal(s.run(table.lookup(tf.constant(["b", "q", "a"]))), [2, -1, 1])


def test_a_key_with_two_values_fails_the_initializer():
    table = _table(("a", "a"), (1, 2))
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="different value for same key"):
            s.run(table.initializer)


def test_keys_of_the_wrong_dtype_fail_while_building():
    with pytest.raises(TypeError, match="string"):
        _table().lookup(tf.constant([1, 2]))


def test_each_session_has_its_own_private_table():
    table = tf.contrib.lookup.MutableHashTable(tf.string, tf.int64, -1)
    insert = table.insert(tf.constant(["k"]), tf.constant([7], tf.int64))
    with tf.Session() as first, tf.Session() as second:
        first.run(insert)
        assert first.run(table.size()) == 1
        assert second.run(table.size()) == 0
        keys, values = first.run(table.export())
        assert keys.tolist() == [b"k"] and values.tolist() == [7]


def test_monitored_session_initializes_the_tables():
    table = tf.contrib.lookup.index_table_from_tensor(["x", "y"], num_oov_buckets=1)
    ids = table.lookup(tf.constant(["y", "x"]))
    tf.train.get_or_create_global_step()
    with tf.train.MonitoredSession() as s:
        np.testing.assert_array_equal(s.run(ids), [1, 0])


def test_the_contrib_and_tf_lookup_names_are_one_set_of_classes():
    assert tf.contrib.lookup.HashTable is tf.lookup.StaticHashTable
    assert tf.contrib.lookup.KeyValueTensorInitializer is tf.lookup.KeyValueTensorInitializer
    assert tf.initialize_all_tables is tf.tables_initializer


def test_oov_buckets_need_the_default_id():
    with pytest.raises(ValueError, match="default_value must be -1"):
        tf.contrib.lookup.index_table_from_tensor(["x"], num_oov_buckets=2, default_value=0)


def test_sets_size_takes_a_sparse_tensor_and_sets_refuse_sparse_inputs():
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.sets.set_size(tf.constant([[1, 2]]))
    with pytest.raises(TypeError, match="dense"):
        tf.sets.set_union(tf.SparseTensor([[0, 0]], [1], [1, 1]), tf.constant([[1]]))
