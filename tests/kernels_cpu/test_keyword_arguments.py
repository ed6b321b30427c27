"""A misspelled keyword argument raises TypeError, as in TF1, instead of being swallowed; TF1's documented
arguments are still accepted."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.variable_scope import _variable_store


def test_variable_getters_refuse_a_misspelled_argument():
    with pytest.raises(TypeError, match="initializr"):
        tf.get_local_variable("epochs", [], dtype=tf.int64, initializr=tf.zeros_initializer())
    with pytest.raises(TypeError, match="initializr"):
        tf.get_variable_scope().get_variable(_variable_store(), "v", shape=[2], initializr=tf.zeros_initializer())
    with pytest.raises(TypeError, match="shap"):
        _variable_store().get_variable("w", shap=[2])
    local = tf.get_local_variable("steps", [], dtype=tf.int64, synchronization=None, aggregation=None)
    scoped = tf.get_variable_scope().get_variable(_variable_store(), "v", shape=[2], use_resource=True,
                                                  synchronization=None, aggregation=None)
    assert local.name == "steps:0" and scoped.name == "v:0"


def test_a_custom_getter_passing_a_misspelled_argument_on_is_refused():
    def misspelling(getter, name, *args, **kwargs):
        return getter(name, *args, **dict(kwargs, trainabel=False))

    def resource(getter, name, *args, **kwargs):  # TF1's getter takes use_resource, synchronization, aggregation
        return getter(name, *args, use_resource=True, synchronization=None, aggregation=None, **kwargs)

    with tf.variable_scope("typo", custom_getter=misspelling), pytest.raises(TypeError, match="trainabel"):
        tf.get_variable("v", [2])
    with tf.variable_scope("ok", custom_getter=resource):
        assert tf.get_variable("v", [2]).name == "ok/v:0"


def test_the_fixed_size_partitioner_takes_shape_and_dtype_only():
    partitioner = tf.fixed_size_partitioner(2)
    assert partitioner(shape=tf.TensorShape([4, 3]), dtype=tf.float32) == [2, 1]
    with pytest.raises(TypeError, match="dtyp"):
        partitioner(shape=tf.TensorShape([4, 3]), dtyp=tf.float32)


def test_layers_refuse_a_misspelled_argument():
    x = tf.placeholder(tf.float32, [None, 4])
    with pytest.raises(TypeError, match="activaton"):
        tf.layers.Dense(3, activaton=tf.nn.relu)
    with pytest.raises(TypeError, match="trainng"):
        tf.layers.batch_normalization(x, trainng=True)
    with pytest.raises(TypeError, match="momentun"):
        tf.layers.BatchNormalization(momentun=0.9)
    assert tf.layers.Dense(3, input_shape=(4,), name="first")(x).shape.as_list() == [None, 3]


@pytest.mark.parametrize("argument", [{"renorm": True}, {"virtual_batch_size": 2}, {"adjustment": lambda s: s}])
def test_batch_normalization_refuses_what_it_does_not_implement(argument):
    x = tf.placeholder(tf.float32, [None, 4])
    name = next(iter(argument))
    with pytest.raises(ValueError, match=f"{name}=.* is not supported"):
        tf.layers.batch_normalization(x, **argument)
    with pytest.raises(ValueError, match=f"{name}=.* is not supported"):
        tf.layers.BatchNormalization(**argument)
    tf.layers.batch_normalization(x, renorm_clipping=None, renorm_momentum=0.9)  # only used with renorm


def _export_doubling(path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.add_to_collection("outputs", tf.identity(x * 2.0, name="doubled"))
        with pytest.raises(TypeError, match="as_txt"):
            tf.train.export_meta_graph(path, as_txt=True)
        tf.train.export_meta_graph(path, clear_extraneous_savers=True, strip_default_attrs=True,
                                   save_debug_info=False)


@pytest.mark.parametrize("scope", [None, "imported"])
def test_import_meta_graph_maps_inputs_and_refuses_a_misspelled_argument(tmp_path, scope):
    path = str(tmp_path / "doubling.meta")
    _export_doubling(path)
    with tf.Graph().as_default(), tf.Session() as s:
        with pytest.raises(TypeError, match="clear_device"):
            tf.train.import_meta_graph(path, clear_device=True)
        saver = tf.train.import_meta_graph(path, import_scope=scope, input_map={"x:0": tf.constant([3.0, 4.0])})
        assert saver is None  # no variables, as TF1
        y = tf.get_collection("outputs")[0]
        assert y.name == ("imported/doubled:0" if scope else "doubled:0")
        np.testing.assert_array_equal(s.run(y), [6.0, 8.0])  # TF 1.x gives [6, 8] (checked with TF 2.21 compat.v1)
