"""tf.cond and tf.case: values, nested structures, only the taken branch runs, errors."""

import collections
import warnings

import numpy as np
import pytest

import tensorweave as tf


def test_cond_picks_the_branch_at_run_time(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [2])
    y = tf.cond(p, lambda: tf.multiply(x, 2.0), lambda: tf.add(x, 10.0))
    np.testing.assert_allclose(sess.run(y, {p: True, x: [1.0, 2.0]}), [2.0, 4.0])
    np.testing.assert_allclose(sess.run(y, {p: False, x: [1.0, 2.0]}), [11.0, 12.0])
    assert y.shape.as_list() == [2]


def test_nested_structures_and_tf1_argument_names(sess):
    Pair = collections.namedtuple("Pair", "a b")
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(3.0)
    out = tf.cond(p, fn1=lambda: {"s": Pair(x, [x, tf.constant(1)])},
                  fn2=lambda: {"s": Pair(tf.negative(x), [tf.multiply(x, x), tf.constant(2)])})
    got = sess.run(out, {p: False})
    assert isinstance(got["s"], Pair)
    assert got["s"].a == -3.0 and list(got["s"].b) == [9.0, 2]
    assert sess.run(out, {p: True})["s"].b[1] == 1


def test_single_element_lists_unpack_unless_strict(sess):
    p = tf.constant(True)
    loose = tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)])
    strict = tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)], strict=True)
    assert isinstance(loose, tf.Tensor) and isinstance(strict, list)
    assert sess.run(loose) == 1 and sess.run(strict) == [1]


def test_branches_may_return_outer_tensors_and_python_values(sess):
    p = tf.placeholder(tf.bool, [])
    outer = tf.constant([1.0, 2.0])
    y = tf.cond(p, lambda: outer, lambda: np.array([5.0, 6.0], np.float32))
    np.testing.assert_allclose(sess.run(y, {p: True}), [1.0, 2.0])
    np.testing.assert_allclose(sess.run(y, {p: False}), [5.0, 6.0])


def test_nested_conds(sess):
    a = tf.placeholder(tf.bool, [])
    b = tf.placeholder(tf.bool, [])
    x = tf.constant(1.0)
    y = tf.cond(a, lambda: tf.cond(b, lambda: tf.add(x, 1.0), lambda: tf.add(x, 2.0)),
                lambda: tf.cond(b, lambda: tf.add(x, 3.0), lambda: tf.add(x, 4.0)))
    got = {(va, vb): sess.run(y, {a: va, b: vb}) for va in (True, False) for vb in (True, False)}
    assert got == {(True, True): 2.0, (True, False): 3.0, (False, True): 4.0, (False, False): 5.0}


def test_untaken_branch_does_not_run(sess, capsys):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(7.0)
    y = tf.cond(p, lambda: tf.Print(x, [x], message="TRUE-BRANCH "),
                lambda: tf.Print(tf.add(x, 1.0), [x], message="FALSE-BRANCH "))
    assert sess.run(y, {p: True}) == 7.0
    err = capsys.readouterr().err
    assert "TRUE-BRANCH [7]" in err and "FALSE-BRANCH" not in err
    assert sess.run(y, {p: False}) == 8.0
    err = capsys.readouterr().err
    assert "FALSE-BRANCH [7]" in err and "TRUE-BRANCH" not in err


def test_an_op_with_no_inputs_in_a_branch_is_conditional(sess, capsys):
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.constant(1), lambda: tf.Print(tf.constant(2), [], message="NOINPUT"))
    assert sess.run(y, {p: True}) == 1
    assert "NOINPUT" not in capsys.readouterr().err


def test_stateful_op_created_outside_the_branch_runs_anyway_and_warns(sess, capsys):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(1.0)
    outside = tf.Print(x, [x], message="OUTSIDE ")
    with pytest.warns(UserWarning, match="created outside the branch function"):
        y = tf.cond(p, lambda: outside, lambda: tf.add(x, 1.0))
    assert sess.run(y, {p: False}) == 2.0
    assert "OUTSIDE [1]" in capsys.readouterr().err  # it ran although the branch was not taken
    grouped = tf.group(outside)
    with pytest.warns(UserWarning, match="'group_deps' \\(NoOp\\), .* runs whether or not the branch is taken"):
        tf.cond(p, lambda: grouped, lambda: tf.no_op())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.cond(p, lambda: tf.Print(x, [x]), lambda: x)  # created inside: no warning


def test_branches_returning_ops(sess, capsys):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(3)
    done = tf.cond(p, lambda: tf.print("yes", x, output_stream="stdout"),
                   lambda: tf.print("no", output_stream="stdout"))
    sess.run(done, {p: True})
    sess.run(done, {p: False})
    assert capsys.readouterr().out == "yes 3\nno\n"


def test_case_picks_the_first_true_predicate(sess):
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)), (tf.less(x, 10), lambda: tf.constant(1))],
                default=lambda: tf.constant(100))
    assert [sess.run(y, {x: v}) for v in (-5, 3, 50)] == [-1, 1, 100]
    dict_case = tf.case({tf.equal(x, 1): lambda: tf.constant(10), tf.equal(x, 2): lambda: tf.constant(20)},
                        default=lambda: tf.constant(0), exclusive=True)
    assert [sess.run(dict_case, {x: v}) for v in (1, 2, 3)] == [10, 20, 0]


def test_case_exclusive_and_missing_default_fail_clearly(sess):
    x = tf.placeholder(tf.int32, [])
    both = tf.case([(tf.less(x, 5), lambda: tf.constant(1)), (tf.less(x, 10), lambda: tf.constant(2))],
                   default=lambda: tf.constant(0), exclusive=True)
    assert sess.run(both, {x: 7}) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one predicate is true"):
        sess.run(both, {x: 1})
    no_default = tf.case([(tf.less(x, 0), lambda: tf.constant(1)), (tf.greater(x, 10), lambda: tf.constant(2))])
    assert sess.run(no_default, {x: 20}) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="none of the predicates is true"):
        sess.run(no_default, {x: 5})


def test_predicate_errors_name_the_problem_and_the_line():
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match=r"pred must be a bool tensor, but .* has dtype int32 \(.*test_cond.py"):
        tf.cond(tf.constant(1), lambda: x, lambda: x)
    with pytest.raises(ValueError, match=r"pred must be a scalar, but .* has shape \(2,\)"):
        tf.cond(tf.constant([True, False]), lambda: x, lambda: x)
    with pytest.raises(TypeError, match="Python bool"):
        tf.cond(True, lambda: x, lambda: x)


def test_unknown_rank_predicate_is_checked_when_run(sess):
    p = tf.placeholder(tf.bool)
    y = tf.cond(p, lambda: tf.constant(1), lambda: tf.constant(2))
    assert sess.run(y, {p: True}) == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a scalar bool, but it has shape \\[2\\]"):
        sess.run(y, {p: [True, False]})


def test_branch_mismatch_errors_name_both_sides():
    p = tf.constant(True)
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match=r"true_fn returned \(\*, \*\) and false_fn returned \*"):
        tf.cond(p, lambda: (x, x), lambda: x)
    with pytest.raises(TypeError, match="true_fn has dtype int32 but the same output of false_fn has dtype float32"):
        tf.cond(p, lambda: tf.constant(1), lambda: x)
    with pytest.raises(ValueError, match="false_fn returned None"):
        tf.cond(p, lambda: x, lambda: None)
