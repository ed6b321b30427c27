"""tf.Variable: resource state on a device, reads and updates, copy-on-write, collections, initializers."""

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(7)


# ---- creation and naming ------------------------------------------------------------------------------
def test_a_variable_is_named_like_tf1_and_lives_in_the_collections():
    with tf.name_scope("outer"):
        w = tf.Variable(np.zeros((2, 3), np.float32), name="w")
    b = tf.Variable(1.0, name="b", trainable=False)
    c = tf.Variable([1, 2], collections=[tf.GraphKeys.LOCAL_VARIABLES], trainable=False)
    assert (w.name, w.op.name, w.op.type) == ("outer/w:0", "outer/w", "VarHandleOp")
    assert w.initializer.name == "outer/w/Assign" and w.dtype is tf.float32 and w.shape.as_list() == [2, 3]
    assert c.name == "Variable:0" and c.dtype is tf.int32
    assert tf.global_variables() == [w, b] and tf.trainable_variables() == [w]
    assert tf.local_variables() == [c] and tf.all_variables() == [w, b]
    assert tf.global_variables(scope="outer") == [w]
    assert repr(w) == "<tf.Variable 'outer/w:0' shape=(2, 3) dtype=float32>"
    assert tf.Variable(0.0, name="w").name == "w:0" and tf.Variable(0.0, name="w").name == "w_1:0"


def test_bad_constructions_say_what_is_wrong():
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable()
    with pytest.raises(ValueError, match="initial_value must have a shape specified"):
        tf.Variable(tf.placeholder(tf.float32, [None, 2]))
    with pytest.raises(ValueError, match="must be a callable"):
        tf.Variable(1.0, constraint=3)
    with pytest.raises(ValueError, match="collections argument .* must be a list"):
        tf.Variable(1.0, collections="variables")
    with pytest.raises(ValueError, match="shape"):
        tf.Variable([1.0, 2.0], shape=[3])


def test_initialize_read_and_the_uninitialized_error_names_the_variable(sess):
    v = tf.Variable(np.arange(4.0), name="counts")
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value counts") as info:
        sess.run(v)
    assert "test_variables.py" in str(info.value)  # the user's line that made the read
    assert not sess.run(tf.is_variable_initialized(v))
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(v), np.arange(4.0))
    np.testing.assert_array_equal(v.eval(session=sess), np.arange(4.0))
    assert sess.run(v.is_initialized())


def test_callable_initial_value_and_dtype_conversion(sess):
    v = tf.Variable(lambda: np.ones(3), dtype=tf.float64)
    i = tf.Variable([1, 2, 3], dtype=tf.int64)
    sess.run(tf.variables_initializer([v, i]))
    assert sess.run(v).dtype == np.float64 and sess.run(i).dtype == np.int64
    with pytest.raises(TypeError):
        tf.Variable([1.5], dtype=tf.int32)


def test_validate_shape_false_lets_the_shape_change(sess):
    v = tf.Variable(np.zeros(2), validate_shape=False)
    assert v.shape.ndims is None
    grow = v.assign(np.arange(5.0))
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(grow), np.arange(5.0))


# ---- updates ---------------------------------------------------------------------------------------------
def test_assign_add_sub_return_reads_after_the_update(sess):
    v = tf.Variable(np.array([1.0, 2.0]), name="v")
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v.assign([5.0, 6.0])), [5.0, 6.0])
    np.testing.assert_array_equal(sess.run(tf.assign_add(v, [1.0, 1.0])), [6.0, 7.0])
    np.testing.assert_array_equal(sess.run(tf.assign_sub(v, [2.0, 3.0])), [4.0, 4.0])
    doubled = v.assign(v * 2.0) * 10.0  # the result works as a tensor
    np.testing.assert_array_equal(sess.run(doubled), [80.0, 80.0])
    op = v.assign_add([1.0, 1.0], read_value=False)
    assert isinstance(op, tf.Operation)
    sess.run(op)
    np.testing.assert_array_equal(sess.run(v), [9.0, 9.0])


def test_reads_under_control_dependencies_see_the_update(sess):
    v = tf.Variable(1.0)
    bump = v.assign_add(10.0, read_value=False)
    with tf.control_dependencies([bump]):
        after = v.read_value() + 0.0
    sess.run(v.initializer)
    assert sess.run(after) == 11.0
    assert sess.run(after) == 21.0


def test_chained_updates_happen_in_order(sess):
    v = tf.Variable(1.0)
    result = v.assign(3.0).assign_add(4.0).assign_sub(1.0)
    sess.run(v.initializer)
    assert sess.run(result) == 6.0


def test_a_fetched_value_never_changes_under_later_updates(sess):
    """Copy-on-write: updates are in place only when nothing else holds the array."""
    v = tf.Variable(np.zeros(3))
    inc = v.assign_add(np.ones(3), read_value=False)
    sess.run(v.initializer)
    before = sess.run(v)
    sess.run(inc)
    np.testing.assert_array_equal(before, np.zeros(3))
    np.testing.assert_array_equal(sess.run(v), np.ones(3))


def test_a_read_and_an_update_in_one_step_keep_the_read_consistent(sess):
    v = tf.Variable(np.full(4, 2.0))
    read = v.read_value()
    with tf.control_dependencies([read]):
        update = v.assign_add(np.ones(4), read_value=False)
    sess.run(v.initializer)
    got, _ = sess.run([read, update])
    np.testing.assert_array_equal(got, np.full(4, 2.0))
    np.testing.assert_array_equal(sess.run(v), np.full(4, 3.0))


def test_assign_checks_shapes_and_dtypes():
    v = tf.Variable(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"cannot assign a value of shape \(3,\)"):
        v.assign(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="dtype float32 for tensor"):
        v.assign(tf.constant(np.zeros((2, 2))))
    with pytest.raises(TypeError, match="needs a tf.Variable"):
        tf.assign(tf.constant(1.0), 2.0)


def test_scatter_updates_with_duplicate_rows(sess):
    v = tf.Variable(np.arange(8.0).reshape(4, 2))
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(tf.scatter_add(v, [1, 1, 3], np.ones((3, 2)))),
                                  [[0, 1], [4, 5], [4, 5], [7, 8]])
    np.testing.assert_array_equal(sess.run(tf.scatter_sub(v, [0], [[1.0, 1.0]])), [[-1, 0], [4, 5], [4, 5], [7, 8]])
    np.testing.assert_array_equal(sess.run(tf.scatter_update(v, [2], [[9.0, 9.0]]))[2], [9, 9])
    np.testing.assert_array_equal(sess.run(v.scatter_mul(tf.IndexedSlices(np.full((1, 2), 2.0), [3])))[3], [14, 16])
    np.testing.assert_array_equal(sess.run(tf.scatter_max(v, [0, 0], [[5.0, -5.0], [-7.0, 7.0]]))[0], [5, 7])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 4 is not in \[0, 4\)"):
        sess.run(tf.scatter_add(v, [0, 4], np.ones((2, 2))))
    with pytest.raises(TypeError, match="not IndexedSlices"):
        v.scatter_add(np.ones((1, 2)))


def test_sparse_read_and_its_gradient_are_rows_only(sess):
    table = tf.Variable(RNG.standard_normal((6, 3)))
    rows = table.sparse_read([4, 1, 4])
    (grad,) = tf.gradients(tf.reduce_sum(rows * 3.0), [table])
    assert isinstance(grad, tf.IndexedSlices)
    sess.run(table.initializer)
    value = sess.run(table)
    np.testing.assert_array_equal(sess.run(rows), value[[4, 1, 4]])
    g = sess.run(grad)
    assert list(g.indices) == [4, 1, 4] and list(g.dense_shape) == [6, 3]
    np.testing.assert_array_equal(g.values, np.full((3, 3), 3.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 9 is not in \[0, 6\)"):
        sess.run(table.sparse_read([9]))


def test_dense_gradient_of_a_variable_sums_every_read(sess):
    w = tf.Variable(np.array([1.0, -2.0]))
    loss = tf.reduce_sum(w * w) + tf.reduce_sum(3.0 * w)
    (grad,) = tf.gradients(loss, [w])
    sess.run(w.initializer)
    np.testing.assert_allclose(sess.run(grad), 2 * np.array([1.0, -2.0]) + 3.0)


def test_count_up_to_stops_at_its_limit(sess):
    counter = tf.Variable(0, dtype=tf.int64)
    nxt = tf.count_up_to(counter, 2)
    sess.run(counter.initializer)
    assert [sess.run(nxt), sess.run(nxt)] == [0, 1]
    with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
        sess.run(nxt)


def test_load_sets_a_value_without_new_ops(sess):
    v = tf.Variable(np.zeros(2))
    ops_before = len(tf.get_default_graph().get_operations())
    v.load([3.0, 4.0], sess)
    assert len(tf.get_default_graph().get_operations()) == ops_before
    np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])


def test_python_operators_and_conversion(sess):
    v = tf.Variable(np.array([1.0, 4.0]))
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v + 1.0), [2.0, 5.0])
    np.testing.assert_array_equal(sess.run(2.0 * v), [2.0, 8.0])
    np.testing.assert_array_equal(sess.run(-v), [-1.0, -4.0])
    np.testing.assert_array_equal(sess.run(v[1]), 4.0)
    np.testing.assert_array_equal(sess.run(v > 2.0), [False, True])
    np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(v)), [1.0, 4.0])
    with pytest.raises(ValueError, match="Incompatible type conversion requested to type float32"):
        tf.convert_to_tensor(v, dtype=tf.float32)
    with pytest.raises(TypeError, match="not iterable"):
        list(v)
    with pytest.raises(TypeError, match="Python bool"):
        bool(v)


def test_initialized_value_lets_one_variable_start_from_another(sess):
    a = tf.Variable(np.array([1.0, 2.0]))
    b = tf.Variable(a.initialized_value() * 3.0)
    sess.run(b.initializer)  # a was never initialized: b starts from a's initial value
    np.testing.assert_array_equal(sess.run(b), [3.0, 6.0])
    sess.run(a.assign([10.0, 10.0]))
    sess.run(b.initializer)
    np.testing.assert_array_equal(sess.run(b), [30.0, 30.0])


def test_report_and_assert_uninitialized_variables(sess):
    a = tf.Variable(1.0, name="a")
    tf.Variable(2.0, name="b")
    local = tf.Variable(0, name="epochs", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    report = tf.report_uninitialized_variables()
    check = tf.assert_variables_initialized()
    assert sorted(sess.run(report).tolist()) == [b"a", b"b", b"epochs"]  # bytes, as TF1 fetches strings
    sess.run(a.initializer)
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value (b|epochs)"):
        sess.run(check)
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    assert sess.run(report).size == 0
    sess.run(check)
    assert tf.report_uninitialized_variables([]).shape.as_list() == [0]
    assert local in tf.local_variables()


def test_variable_of_a_different_dtype_under_the_same_shared_name_is_refused():
    target = "local://variables_dtype_clash"
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        v1 = tf.Variable(np.zeros(2, np.float32), name="clash")
    with g2.as_default():
        v2 = tf.Variable(np.zeros(2, np.int32), name="clash")
    try:
        with tf.Session(target, graph=g1) as a, tf.Session(target, graph=g2) as b:
            a.run(v1.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match="is a float32 variable"):
                b.run(v2.initializer)
    finally:
        tf.Session.reset(target)


def test_caching_device_reads_through_a_cached_copy(sess):
    v = tf.Variable(np.ones(2), caching_device="/cpu:0")
    assert v.value().op.type == "Identity"
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v.value()), np.ones(2))


def test_a_variable_read_inside_a_while_loop(sess):
    w = tf.Variable(2.0)
    _, total = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + w), [0, 0.0])
    sess.run(w.initializer)
    assert sess.run(total) == 6.0


def test_assign_inside_cond_runs_only_on_its_branch(sess):
    v = tf.Variable(0.0)
    flag = tf.placeholder(tf.bool, [])
    result = tf.cond(flag, lambda: v.assign_add(1.0), lambda: v.read_value())
    sess.run(v.initializer)
    sess.run(result, {flag: False})
    assert sess.run(v) == 0.0
    sess.run(result, {flag: True})
    assert sess.run(v) == 1.0


def test_gather_from_an_assignment_reads_after_it():
    """tf.gather(v.assign_add(d), i) (a sparse read of the assignment's result, as sensitivity_at_specificity's
    update op does) waits for the assignment, as TF's _UnreadVariable.sparse_read does; it read the old rows."""
    with tf.Graph().as_default():
        v = tf.Variable([5.0, 6.0, 7.0])
        rows = tf.gather(v.assign_add([1.0, 1.0, 1.0]), [1, 2])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(20):
                assert sess.run(rows).tolist() == pytest.approx([7.0, 8.0])
                sess.run(v.assign([5.0, 6.0, 7.0]))
