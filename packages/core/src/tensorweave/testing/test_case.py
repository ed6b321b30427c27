"""``tf.test.TestCase`` and ``tf.test.main``: the test base class TF1 projects write their op and model tests
with. Each test starts on a fresh default graph with TF's default seeds; ``session()``/``cached_session()``
open sessions on it; the ``assertAll*`` family compares tensors, arrays and nested structures of them.
absl's TestCase (absl-py is already here for ``tf.flags``) gives the rest, as in TF."""

import contextlib
import random
import re
import tempfile

import numpy as np
from absl.testing import absltest

from tensorweave import dtypes, errors
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import random_seed
from tensorweave.framework.default_session import get_default_session
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.tensor import Tensor
from tensorweave.runtime.config import ConfigProto
from tensorweave.runtime.session import Session

__all__ = ["TestCase", "get_temp_dir", "main"]

def main(argv=None):
    """Runs the test module's tests (absl's test runner, as TF's ``tf.test.main``)."""
    return absltest.main(argv=argv)


def get_temp_dir():
    """A temporary directory for this test process (removed when it ends)."""
    global _TEMP_DIR
    if _TEMP_DIR is None:
        _TEMP_DIR = tempfile.mkdtemp(prefix="tensorweave-test-")
    return _TEMP_DIR


_TEMP_DIR = None


class TestCase(absltest.TestCase):
    """TF1's ``tf.test.TestCase``."""

    def setUp(self):
        super().setUp()
        self._cached_session = None
        random.seed(random_seed.DEFAULT_GRAPH_SEED)
        np.random.seed(random_seed.DEFAULT_GRAPH_SEED)
        graph_mod.reset_default_graph()
        random_seed.set_random_seed(random_seed.DEFAULT_GRAPH_SEED)

    def tearDown(self):
        self._close_cached_session()
        super().tearDown()

    def get_temp_dir(self):
        return get_temp_dir()

    # ---- sessions ---------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """A new session on ``graph`` (default: the test's graph), installed as the default session."""
        with Session(graph=graph, config=self._config(config, use_gpu, force_gpu)) as sess, sess.as_default():
            with self._device(use_gpu, force_gpu):
                yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """One session for the whole test, reused by every call (on the graph of the first call)."""
        if self._cached_session is None:
            self._cached_session = Session(graph=graph, config=self._config(config, use_gpu, force_gpu))
        sess = self._cached_session
        if graph is not None and sess.graph is not graph:
            raise ValueError("cached_session() was first called with another graph; use session(graph=...) "
                             "for a second graph in one test")
        with sess.as_default(), sess.graph.as_default(), self._device(use_gpu, force_gpu):
            yield sess

    @property
    def test_session(self):
        """TF1's older name of ``cached_session`` (a property, so test runners do not collect it as a test)."""
        return self.cached_session

    def evaluate(self, tensors):
        """The values of ``tensors`` (any nested structure) in the default session, or a cached one."""
        sess = get_default_session()
        if sess is None:
            with self.cached_session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    def _close_cached_session(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None

    @staticmethod
    def _config(config, use_gpu, force_gpu):
        if config is not None or use_gpu or force_gpu:
            return config
        return ConfigProto(device_count={"GPU": 0})

    @staticmethod
    def _device(use_gpu, force_gpu):
        return graph_mod.device("/device:GPU:0") if force_gpu else contextlib.nullcontext()

    # ---- comparisons -----------------------------------------------------------------------------------
    def _value(self, x):
        if isinstance(x, Tensor) or hasattr(x, "_as_graph_element") or type(x).__name__ == "Variable":
            x = self.evaluate(x)
        return x

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802 - TF's names
        """``a`` and ``b`` (tensors, arrays, numbers, or equal nested lists/tuples/dicts of them) are close."""
        a, b = self._value(a), self._value(b)
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertEqual(sorted(a), sorted(b), msg=f"dicts with different keys. {msg or ''}")
            for k in a:
                self.assertAllClose(a[k], b[k], rtol, atol, msg=f"at key {k!r}. {msg or ''}")
            return
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            try:  # lists of numbers, or of arrays of one shape, compare as arrays; anything else part by part
                a, b = np.asarray(a), np.asarray(b)
            except ValueError:
                self.assertEqual(len(a), len(b), f"structures of different lengths. {msg or ''}")
                for x, y in zip(a, b):
                    self.assertAllClose(x, y, rtol, atol, msg)
                return
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, err_msg=msg or "",
                                   equal_nan=True)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,  # noqa: N802
                                      half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        a, b = np.asarray(self._value(a)), np.asarray(self._value(b))
        kind = dtypes.as_dtype(a.dtype) if a.dtype != object else None
        if kind is dtypes.float32 or kind is dtypes.complex64:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        elif kind is dtypes.float16:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        elif kind is dtypes.bfloat16:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol, atol, msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol, atol)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are close at all elements")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        a, b = np.asarray(self._value(a)), np.asarray(self._value(b))
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}. {msg or ''}")
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        a, b = np.asarray(self._value(a)), np.asarray(self._value(b))
        if a.shape == b.shape and np.array_equal(a, b):
            raise AssertionError(msg or "The two values are equal at all elements")

    def _compare_all(self, a, comparison, bound, description):
        a = np.asarray(self._value(a))
        if not np.all(comparison(a, bound)):
            raise AssertionError(f"{a} is not {description} {bound}")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, np.greater, comparison_target, "all greater than")

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, np.greater_equal, comparison_target, "all greater than or equal to")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, np.less, comparison_target, "all less than")

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, np.less_equal, comparison_target, "all less than or equal to")

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        target = np.asarray(self._value(target))
        low = np.greater if open_lower_bound else np.greater_equal
        high = np.less if open_upper_bound else np.less_equal
        outside = ~(low(target, lower_bound) & high(target, upper_bound))
        if np.any(outside):
            raise AssertionError(f"{int(outside.sum())} of the {target.size} elements are outside "
                                 f"{'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                                 f"{')' if open_upper_bound else ']'}: {target[outside][:10]}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        values = set(np.asarray(self._value(target)).ravel().tolist())
        extra = values - set(expected_set)
        if extra:
            raise AssertionError(f"{sorted(extra)} are not in {set(expected_set)}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        if not abs(f1 - f2) <= err:
            raise AssertionError(f"{f1} != {f2} +/- {err}{' : ' + msg if msg else ''}")

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        self.assertTrue(np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2)) <= err, msg)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """The numpy array's shape equals the tensor's static shape."""
        self.assertEqual(list(np.shape(np_array)), tf_tensor.get_shape().as_list(), msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        self.assertEqual(np.asarray(self._value(target)).dtype, dtypes.as_dtype(expected_dtype).as_numpy_dtype)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        self.assertEqual(DeviceSpec.from_string(device1 or "").to_string(),
                         DeviceSpec.from_string(device2 or "").to_string(), msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        """The block raises ``exception_type`` whose message matches the regex (or satisfies the predicate)."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                return re.search(expected_err_re_or_predicate, str(e)) is not None
        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception of type {type(e).__name__} did not match "
                                     f"{expected_err_re_or_predicate!r}: {e}") from e
        else:
            raise AssertionError(f"Exception of type {exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        """The block raises a ``tf.errors.OpError`` matching the regex or predicate."""
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

