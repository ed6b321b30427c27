"""tf.test.TestCase as TF1 projects use it (their op tests subclass it), and tf.test.main running a module."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf


class OpTest(tf.test.TestCase):
    def test_each_test_gets_a_fresh_graph_with_tf_default_seed(self):
        assert tf.get_default_graph().get_operations() == []
        assert tf.get_default_graph().seed == 87654321

    def test_cached_session_is_one_session_and_the_default(self):
        x = tf.constant([1.0, 2.0])
        with self.cached_session() as first:
            self.assertAllClose(first.run(x * 2.0), [2.0, 4.0])
            assert tf.get_default_session() is first
        with self.test_session() as second:
            assert second is first

    def test_session_and_evaluate(self):
        v = tf.Variable([3.0, 4.0])
        with self.session() as sess:
            sess.run(v.initializer)
            self.assertAllEqual(self.evaluate(v), [3.0, 4.0])
            self.assertAllClose({"n": tf.norm(v), "pair": (v, [1, 2])}, {"n": 5.0, "pair": ([3.0, 4.0], [1, 2])})

    def test_evaluate_without_a_session_uses_the_cached_one(self):
        self.assertEqual(self.evaluate(tf.constant(7)), 7)

    def test_comparisons_fail_when_they_should(self):
        with self.assertRaises(AssertionError):
            self.assertAllClose([1.0, 2.0], [1.0, 2.1])
        with self.assertRaises(AssertionError):
            self.assertAllEqual([[1, 2]], [1, 2])
        with self.assertRaisesRegex(AssertionError, "1 of the 3 elements are outside"):
            self.assertAllInRange(np.array([0.0, 0.5, 1.5]), 0.0, 1.0)
        self.assertAllInRange(np.array([0.0, 1.0]), 0.0, 1.0)
        with self.assertRaises(AssertionError):
            self.assertAllInRange(np.array([0.0, 1.0]), 0.0, 1.0, open_upper_bound=True)
        self.assertAllGreater([2, 3], 1)
        with self.assertRaises(AssertionError):
            self.assertAllLess([2, 3], 3)
        self.assertNotAllClose([1.0], [2.0])
        self.assertAllCloseAccordingToType(np.float16([1.0]), np.float16([1.0005]))
        with self.assertRaises(AssertionError):
            self.assertAllCloseAccordingToType(np.float32([1.0]), np.float32([1.0005]))
        self.assertAllClose([np.ones(2), np.ones(3)], [np.ones(2), np.ones(3)])  # ragged: part by part
        self.assertShapeEqual(np.zeros([2, 3]), tf.zeros([2, 3]))
        self.assertDeviceEqual("/cpu:0", "/device:CPU:0")

    def test_op_errors(self):
        x = tf.placeholder(tf.float32, [2])
        with self.cached_session() as sess:
            with self.assertRaisesOpError("must feed a value for placeholder"):
                sess.run(x)
            with self.assertRaisesWithPredicateMatch(tf.errors.InvalidArgumentError,
                                                     lambda e: "placeholder" in str(e)):
                sess.run(x * 2.0)
        with pytest.raises(AssertionError, match="not raised"):
            with self.assertRaisesOpError("anything"):
                pass


def test_tf_test_main_runs_a_module_and_reports_failures(tmp_path):
    module = tmp_path / "my_op_test.py"
    module.write_text(textwrap.dedent("""
        import tensorweave as tf

        class MyOpTest(tf.test.TestCase):
            def test_add(self):
                with self.cached_session():
                    self.assertAllClose(tf.add(1.0, 2.0), 3.0)

            def test_wrong(self):
                self.assertAllEqual(tf.constant([1, 2]), [1, 3])

        if __name__ == "__main__":
            tf.test.main()
    """))
    proc = subprocess.run([sys.executable, str(module)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Ran 2 tests" in proc.stderr and "FAILED (failures=1)" in proc.stderr and "test_wrong" in proc.stderr
