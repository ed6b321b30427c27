"""TF1's ``tf.saved_model.utils``: tensors to and from the TensorInfo protos a SignatureDef holds."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.attr_value import to_attr_value
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor import Tensor
from tensorweave.protos.meta_graph import TensorInfo

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor):
    """The TensorInfo of a Tensor (its name, dtype and shape) or a SparseTensor (its three tensors' names)."""
    if isinstance(tensor, SparseTensor):
        info = TensorInfo(dtype=tensor.values.dtype.as_datatype_enum)
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        info.tensor_shape.CopyFrom(to_attr_value(tensor.get_shape(), "shape").shape)
        return info
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info takes a Tensor or SparseTensor, got {tensor!r}")
    info = TensorInfo(name=tensor.name, dtype=tensor.dtype.as_datatype_enum)
    info.tensor_shape.CopyFrom(to_attr_value(tensor.shape, "shape").shape)
    return info


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor (or SparseTensor) ``tensor_info`` names, in ``graph`` (default graph) under ``import_scope``."""
    graph = graph or graph_mod.get_default_graph()

    def element(name):
        return graph.as_graph_element(f"{import_scope}/{name}" if import_scope else name)
    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return element(tensor_info.name)
    if encoding == "coo_sparse":
        sparse = tensor_info.coo_sparse
        return SparseTensor(element(sparse.indices_tensor_name), element(sparse.values_tensor_name),
                            element(sparse.dense_shape_tensor_name))
    raise ValueError(f"TensorInfo names no tensor (encoding {encoding!r}): {tensor_info}")
