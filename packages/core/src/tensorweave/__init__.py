"""Tensorweave: the dataflow-graph system of the TensorFlow papers, with TF1's API.

``import tensorweave as tf`` and a TF 1.x program runs unchanged. Kernels and devices come from
plugins: ``pip install tensorweave[cpu]`` for the CPU.
"""

__version__ = "0.1.0"

import sys as _sys  # noqa: E402

from tensorweave import dtypes, errors, plugins  # noqa: E402 - plugins installs the loader the registries use
from tensorweave.errors import OpError  # noqa: E402,F401
from tensorweave.dtypes import (  # noqa: E402,F401
    DType, as_dtype, bool, complex64, complex128, double, float16, float32, float64, half, int8, int16, int32,
    int64, resource, string, uint8, uint16, uint32, uint64, variant,
)
from tensorweave.dtypes import bfloat16  # noqa: E402,F401 - backed by ml_dtypes
from tensorweave.framework.default_session import get_default_session  # noqa: E402,F401
from tensorweave.framework.device_spec import DeviceSpec  # noqa: E402,F401
from tensorweave.framework.graph import (  # noqa: E402,F401
    Graph, GraphKeys, add_to_collection, add_to_collections, colocate_with, container, control_dependencies, device,
    get_collection, get_collection_ref, get_default_graph, name_scope, reset_default_graph,
)
from tensorweave.framework.graph_io import AttrValue, GraphDef, NodeDef  # noqa: E402,F401
from tensorweave.framework.tensor_proto import make_ndarray, make_tensor_proto  # noqa: E402,F401
from tensorweave.protos.meta_graph import MetaGraphDef  # noqa: E402,F401
from tensorweave.framework.importer import import_graph_def  # noqa: E402,F401
from tensorweave.framework.operation import Operation  # noqa: E402,F401
from tensorweave.framework.random_seed import *  # noqa: E402,F401,F403
from tensorweave.framework.tensor import Tensor  # noqa: E402,F401
from tensorweave.framework.tensor_conversion import (  # noqa: E402,F401
    convert_to_tensor, register_tensor_conversion_function,
)
from tensorweave.framework.tensor_shape import Dimension, TensorShape  # noqa: E402,F401
from tensorweave.framework.indexed_slices import IndexedSlices, IndexedSlicesValue  # noqa: E402,F401
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: E402,F401
from tensorweave.ops.accumulator_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.array_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.bitwise_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.bucketing_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.check_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.clip_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.comparison_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.concat_split_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.confusion_matrix_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.cond import *  # noqa: E402,F401,F403
from tensorweave.ops.control_flow_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.cumulative_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.custom_gradient import *  # noqa: E402,F401,F403
from tensorweave.ops.data_flow_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.decode_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.base64_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.dynamic_partition_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.einsum_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.fill_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.functional_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.gather_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.gradients_impl import *  # noqa: E402,F401,F403
from tensorweave.ops.grid_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.init_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.io_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.linalg_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.linalg_solve_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.logging_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.lookup_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.mask_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.math_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.matmul_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.matrix_diag_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.norm_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.numerics_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.pad_tile_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.parsing_config import *  # noqa: E402,F401,F403
from tensorweave.ops.parsing_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.random_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.range_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.reduction_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.script_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.segment_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.set_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.shape_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.slicing_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.space_depth_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.space_batch_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.sort_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.sparse_math_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.sparse_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.sparse_slice_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.sparse_elementwise_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.sparse_segment_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.special_math_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.state_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.string_split_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.string_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.tensor_array_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.tensor_operators import *  # noqa: E402,F401,F403
from tensorweave.ops.tensor_scatter_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.transpose_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.trig_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.unary_math_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.variable_scope import *  # noqa: E402,F401,F403
from tensorweave.ops.variables import *  # noqa: E402,F401,F403
from tensorweave.ops.while_loop import *  # noqa: E402,F401,F403
from tensorweave.protos.summary import (  # noqa: E402,F401
    Event, HistogramProto, LogMessage, SessionLog, Summary, SummaryDescription, SummaryMetadata, TaggedRunMetadata,
)
from tensorweave.runtime.config import (  # noqa: E402,F401
    ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata, RunOptions,
)
from tensorweave.runtime.session import InteractiveSession, Session  # noqa: E402,F401

from tensorweave import (  # noqa: E402,F401
    compat, data, debugging, extension, image, layers, linalg, losses, manip, math, nn, queue, random, sparse, test,
    train,
)

from tensorweave import bitwise, lookup, manip, sets, strings  # noqa: E402,F401
from tensorweave import app, examples, flags, gfile, io, logging, python_io  # noqa: E402,F401
from tensorweave.logging import get_logger  # noqa: E402,F401
from tensorweave import metrics  # noqa: E402,F401
from tensorweave import saved_model  # noqa: E402,F401
from tensorweave import python  # noqa: E402,F401 - tf.python.framework.graph_util
from tensorweave.framework import graph_util  # noqa: E402,F401
from tensorweave import estimator  # noqa: E402,F401 - above train, metrics and data

from tensorweave import contrib  # noqa: E402,F401 - TF1's contrib: only the pieces programs still import
from tensorweave import python  # noqa: E402,F401 - TF1's internal module paths (tf.python.framework.ops...)

compat.v1 = _sys.modules[__name__]
_sys.modules[__name__ + ".compat.v1"] = compat.v1

_API_HINTS = {"summary": "tensorweave[board] (the tensorboard-lite package)"}


class _MissingNamespace:
    """Stands in for an API namespace whose plugin is not installed, and says what to install."""

    def __init__(self, name, package):
        self._name = name
        self._package = package

    def __getattr__(self, attr):
        raise ImportError(f"tf.{self._name}.{attr} needs {self._package}: pip install {self._package.split()[0]}")

    def __repr__(self):
        return f"<missing tf.{self._name}: pip install {self._package.split()[0]}>"


def __getattr__(name):
    module = plugins.get_registries().api.get(name)
    if module is not None:
        globals()[name] = module
        return module
    if name in _API_HINTS:
        return _MissingNamespace(name, _API_HINTS[name])
    raise AttributeError(f"module 'tensorweave' has no attribute {name!r}")


def disable_eager_execution():
    """Graph mode is the only mode here, so this has nothing to switch (kept for TF1/compat.v1 scripts)."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Refused: Tensorweave runs TF1 graphs in sessions; there is no eager mode to turn on."""
    raise RuntimeError("tf.enable_eager_execution(): Tensorweave has no eager mode, only TF1's graphs and "
                       "sessions. Remove the call and run the ops with tf.Session().run(...)")


def disable_v2_behavior():
    """TF1 behaviour is the only behaviour here; kept so ``tf.compat.v1`` scripts run unchanged."""


def executing_eagerly():
    return False
