"""TF1 programs import TensorFlow's internal modules (``from tensorflow.python.framework import ops``); with
``tensorweave`` in their place those paths serve the same functions."""

import importlib

import pytest

import tensorweave as tf


def test_from_imports_of_internal_modules_give_the_public_functions():
    from tensorweave.python.framework import ops, tensor_shape, tensor_util
    from tensorweave.python.ops import array_ops, control_flow_ops, math_ops
    from tensorweave.python.platform import gfile
    from tensorweave.python.training import moving_averages
    from tensorweave.python.util import compat, nest
    assert ops.convert_to_tensor is tf.convert_to_tensor and ops.name_scope is tf.name_scope
    assert ops.Graph is tf.Graph and ops.GraphKeys is tf.GraphKeys
    assert array_ops.shape is tf.shape and array_ops.concat is tf.concat and math_ops.less is tf.less
    assert control_flow_ops.cond is tf.cond and gfile.FastGFile is tf.gfile.FastGFile
    assert compat.as_bytes("a") == b"a" and nest.map_structure(lambda v: v * 2, [1, (2,)]) == [2, (4,)]
    assert tensor_shape.scalar() == tf.TensorShape([]) and tensor_util.constant_value(tf.constant(3)) == 3
    assert moving_averages.assign_moving_average is tf.train.moving_averages.assign_moving_average


def test_attribute_paths_as_programs_write_them():
    assert tf.python.training.training.NewCheckpointReader is tf.train.NewCheckpointReader
    assert tf.python.ops.array_ops.identity is tf.identity
    assert tf.python.ops.random_ops.random_uniform is tf.random_uniform
    assert tf.python.client.timeline.Timeline is tf.python.client.timeline.Timeline
    assert tf.python.tf2.enabled() is False


def test_a_module_the_table_does_not_list_serves_the_public_names():
    gen_math_ops = importlib.import_module("tensorweave.python.ops.gen_math_ops")
    assert gen_math_ops.floor is tf.floor


def test_a_missing_name_says_where_it_looked():
    from tensorweave.python.ops import array_ops
    with pytest.raises(AttributeError, match=r"tensorflow\.python\.ops\.array_ops\.no_such_op has no Tensorweave "
                                             r"counterpart \(looked in tensorweave, "):
        array_ops.no_such_op
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tensorweave.python.no_such_folder.module")


def test_uid_is_unique():
    from tensorweave.python.framework import ops
    first, second = ops.uid(), ops.uid()
    assert second > first


@pytest.mark.parametrize("pred", [True, 1, tf.constant(True)], ids=["bool", "int", "constant"])
def test_smart_cond_calls_the_branch_a_known_predicate_selects(pred):
    from tensorweave.python.layers import utils
    calls = []
    result = utils.smart_cond(pred, lambda: calls.append("true") or tf.constant(1), lambda: calls.append("false"))
    assert calls == ["true"] and tf.Session().run(result) == 1


def test_smart_cond_builds_a_cond_for_a_fed_predicate():
    pred = tf.placeholder(tf.bool, [])
    result = tf.contrib.framework.smart_cond(pred, lambda: tf.constant(1), lambda: tf.constant(2))
    with tf.Session() as sess:
        assert [sess.run(result, {pred: p}) for p in (True, False)] == [1, 2]
    with pytest.raises(TypeError, match="true_fn and false_fn must be callable"):
        tf.contrib.framework.smart_cond(pred, 1, 2)


def test_list_local_devices_reports_the_session_devices():
    from tensorweave.python.client import device_lib
    devices = device_lib.list_local_devices()
    cpu = next(d for d in devices if d.device_type == "CPU")
    assert cpu.name == "/device:CPU:0" and cpu.memory_limit > 0
    two = device_lib.list_local_devices(tf.ConfigProto(device_count={"CPU": 2}))
    assert [d.name for d in two if d.device_type == "CPU"] == ["/device:CPU:0", "/device:CPU:1"]


def test_enable_eager_execution_says_there_is_no_eager_mode():
    with pytest.raises(RuntimeError, match=r"no eager mode.*tf\.Session\(\)\.run"):
        tf.enable_eager_execution()
