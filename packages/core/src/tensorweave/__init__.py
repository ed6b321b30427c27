"""Tensorweave: the dataflow-graph system of the TensorFlow papers, with TF1's API.

``import tensorweave as tf`` and a TF 1.x program runs unchanged. Kernels and devices come from
plugins: ``pip install tensorweave[cpu]`` for the CPU.
"""

__version__ = "0.1.0"

from tensorweave import dtypes, errors  # noqa: E402
from tensorweave.dtypes import (  # noqa: E402,F401
    DType, as_dtype, bool, complex64, complex128, double, float16, float32, float64, half, int8, int16, int32,
    int64, resource, string, uint8, uint16, uint32, uint64, variant,
)
from tensorweave.framework.device_spec import DeviceSpec  # noqa: E402,F401
from tensorweave.framework.graph import (  # noqa: E402,F401
    Graph, GraphKeys, add_to_collection, add_to_collections, colocate_with, container, control_dependencies, device,
    get_collection, get_collection_ref, get_default_graph, name_scope, reset_default_graph,
)
from tensorweave.framework.graph_io import GraphDef, NodeDef, import_graph_def  # noqa: E402,F401
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
from tensorweave.ops.check_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.clip_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.control_flow_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.data_flow_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.decode_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.dynamic_partition_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.functional_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.gradients_impl import *  # noqa: E402,F401,F403
from tensorweave.ops.init_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.io_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.logging_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.math_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.numerics_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.parsing_config import *  # noqa: E402,F401,F403
from tensorweave.ops.parsing_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.random_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.state_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.tensor_array_ops import *  # noqa: E402,F401,F403
from tensorweave.ops.tensor_operators import *  # noqa: E402,F401,F403
from tensorweave.ops.variable_scope import *  # noqa: E402,F401,F403
from tensorweave.ops.variables import *  # noqa: E402,F401,F403
from tensorweave.protos.summary import (  # noqa: E402,F401
    Event, HistogramProto, LogMessage, SessionLog, Summary, SummaryDescription, SummaryMetadata, TaggedRunMetadata,
)
from tensorweave.runtime.config import (  # noqa: E402,F401
    ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata, RunOptions,
)
from tensorweave.runtime.session import InteractiveSession, Session, get_default_session  # noqa: E402,F401

from tensorweave import compat, debugging, layers, losses, math, nn, queue, random, test, train  # noqa: E402,F401
from tensorweave import io, python_io  # noqa: E402,F401

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
    from tensorweave.plugins import get_registries
    module = get_registries().api.get(name)
    if module is not None:
        globals()[name] = module
        return module
    if name in _API_HINTS:
        return _MissingNamespace(name, _API_HINTS[name])
    raise AttributeError(f"module 'tensorweave' has no attribute {name!r}")


def disable_eager_execution():
    """Graph mode is the only mode here, so this has nothing to switch (kept for TF1/compat.v1 scripts)."""


def disable_v2_behavior():
    """TF1 behaviour is the only behaviour here; kept so ``tf.compat.v1`` scripts run unchanged."""


def executing_eagerly():
    return False
