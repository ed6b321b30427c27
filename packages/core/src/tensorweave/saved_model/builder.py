"""TF1's ``tf.saved_model.builder.SavedModelBuilder``: writes a SavedModel real TensorFlow loads.

Everything is written into a temporary directory beside ``export_dir`` (variables in TF's tensor-bundle format,
assets, then ``saved_model.pb``, each file fsynced) and renamed to ``export_dir`` by ``save``: a crash leaves
no half-written SavedModel under the export name.
"""

import os
import shutil

from google.protobuf import text_format

from tensorweave.formats import checkpoint_files, checkpoint_format
from tensorweave.framework import graph as graph_mod
from tensorweave.protos.meta_graph import AssetFileDef, SavedModel, SaverDef
from tensorweave.saved_model import constants
from tensorweave.saved_model.signature_def_utils import build_signature_def
from tensorweave.saved_model.utils import build_tensor_info
from tensorweave.train.meta_graph import export_meta_graph
from tensorweave.train.saver import Saver

__all__ = ["SavedModelBuilder"]


class SavedModelBuilder:
    """Builds a SavedModel in ``export_dir``: one meta graph with the variables, then more meta graphs (other
    tags) over the same variables, then ``save``."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        if os.path.exists(self._export_dir) and (not os.path.isdir(self._export_dir) or os.listdir(self._export_dir)):
            raise AssertionError(f"Export directory already exists, and isn't empty. Please choose a different "
                                 f"export directory, or delete all the contents of the specified directory: "
                                 f"{self._export_dir}")
        self._staging = checkpoint_files.temp_path(os.path.abspath(self._export_dir).rstrip(os.sep))
        self._saved_model = SavedModel(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._has_saved_variables = False
        self._assets = {}  # file name in assets/ -> source path

    # ---- meta graphs ----------------------------------------------------------------------------------
    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, assets_collection=None,
                                     legacy_init_op=None, clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Saves the session's variables and adds the meta graph of its graph under ``tags``."""
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been saved. Please invoke "
                                 "`add_meta_graph()` instead.")
        with sess.graph.as_default():
            saver = saver or self._default_saver()
            variables = os.path.join(self._staging, constants.VARIABLES_DIRECTORY)
            os.makedirs(variables, exist_ok=True)
            saver.save(sess, os.path.join(variables, constants.VARIABLES_FILENAME), write_meta_graph=False,
                       write_state=False)
            _drop_writer_locks(saver, variables)
            self._add_meta_graph(sess.graph, tags, signature_def_map, assets_collection,
                                 main_op if main_op is not None else legacy_init_op, clear_devices,
                                 strip_default_attrs, saver, sess)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None, legacy_init_op=None,
                       clear_devices=False, main_op=None, strip_default_attrs=False, saver=None):
        """Adds the default graph's meta graph under ``tags``, over the variables saved before."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved yet. Please invoke "
                                 "`add_meta_graph_and_variables()` first.")
        graph = graph_mod.get_default_graph()
        self._add_meta_graph(graph, tags, signature_def_map, assets_collection,
                             main_op if main_op is not None else legacy_init_op, clear_devices, strip_default_attrs,
                             saver or self._default_saver(), None)

    @staticmethod
    def _default_saver():
        return Saver(sharded=True, write_version=SaverDef.V2, allow_empty=True, checkpoint_format="tensorflow")

    def _add_meta_graph(self, graph, tags, signature_def_map, assets_collection, main_op, clear_devices,
                        strip_default_attrs, saver, sess):
        signature_def_map = dict(signature_def_map or {})
        for key, signature in signature_def_map.items():
            _check_signature(graph, key, signature)
        asset_files = self._add_assets(graph, assets_collection, sess)
        if main_op is not None:
            main_op = getattr(main_op, "op", main_op)
            present = graph.get_collection(constants.MAIN_OP_KEY)
            if present and present != [main_op]:
                raise ValueError(f"the graph already has main op {present[0].name!r} (collection "
                                 f"{constants.MAIN_OP_KEY!r}); a SavedModel loader runs exactly one")
            if not present:
                graph.add_to_collection(constants.MAIN_OP_KEY, main_op)
        saver.build()
        meta = export_meta_graph(graph=graph, saver_def=saver.saver_def, clear_devices=clear_devices,
                                 strip_default_attrs=strip_default_attrs)
        meta.meta_info_def.tags.extend(tags)
        for key, signature in signature_def_map.items():
            meta.signature_def[key].CopyFrom(signature)
        meta.asset_file_def.extend(asset_files)
        self._saved_model.meta_graphs.add().CopyFrom(meta)

    def _add_assets(self, graph, assets_collection, sess):
        """Copies each asset file into assets/ and records it (AssetFileDef: its filename tensor and name)."""
        if assets_collection is None:
            return []
        tensors = graph.get_collection(assets_collection) if isinstance(assets_collection, str) else \
            list(assets_collection)
        out = []
        for tensor in tensors:
            path = _asset_path(tensor, sess)
            name = os.path.basename(path)
            if self._assets.get(name, path) != path:
                raise ValueError(f"two assets are named {name!r} ({self._assets[name]} and {path}); rename one")
            self._assets[name] = path
            out.append(AssetFileDef(tensor_info=build_tensor_info(tensor), filename=name))
            graph.add_to_collection(constants.ASSETS_KEY, tensor)
        return out

    # ---- writing ------------------------------------------------------------------------------------
    def save(self, as_text=False):
        """Writes ``saved_model.pb`` (or ``.pbtxt``) and moves the whole SavedModel to ``export_dir``; returns
        the path of the file written."""
        os.makedirs(self._staging, exist_ok=True)
        if self._assets:
            assets = os.path.join(self._staging, constants.ASSETS_DIRECTORY)
            os.makedirs(assets, exist_ok=True)
            for name, source in self._assets.items():
                with open(source, "rb") as f:
                    checkpoint_format.atomic_write(os.path.join(assets, name), f.read())
        name = constants.SAVED_MODEL_FILENAME_PBTXT if as_text else constants.SAVED_MODEL_FILENAME_PB
        data = text_format.MessageToString(self._saved_model).encode() if as_text else \
            self._saved_model.SerializeToString()
        checkpoint_format.atomic_write(os.path.join(self._staging, name), data)
        if os.path.isdir(self._export_dir):
            os.rmdir(self._export_dir)  # empty (checked at construction); a file put there since fails here
        try:
            os.rename(self._staging, self._export_dir)
        except OSError:
            shutil.rmtree(self._staging, ignore_errors=True)
            raise
        return os.path.join(self._export_dir, name)


def _drop_writer_locks(saver, directory):
    """The Saver's claim on the staging path and its lock files end with the save: a SavedModel holds only
    the variables' checkpoint files."""
    token = getattr(saver, "_claim_token", None)
    if token is not None:
        checkpoint_files.release(token)
    for name in os.listdir(directory):
        if name.startswith(".") and name.endswith(checkpoint_files.LOCK_SUFFIX):
            os.remove(os.path.join(directory, name))


def _asset_path(tensor, sess):
    value = tensor.op.get_attr("value") if tensor.op.type == "Const" else (sess.run(tensor) if sess else None)
    if value is None:
        raise ValueError(f"asset {tensor.name} is not a constant filename; an asset is a string Const naming a file")
    value = value.item() if hasattr(value, "item") else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _check_signature(graph, key, signature):
    """A signature whose tensors are not in the graph cannot be served: refuse it now, naming what is missing."""
    if not isinstance(signature, type(build_signature_def())):
        raise TypeError(f"signature_def_map[{key!r}] must be a SignatureDef, got {type(signature).__name__}")
    for kind, infos in (("input", signature.inputs), ("output", signature.outputs)):
        for name, info in infos.items():
            tensor_name = info.name or info.coo_sparse.values_tensor_name
            try:
                graph.as_graph_element(tensor_name)
            except (KeyError, ValueError):
                raise ValueError(f"signature {key!r}: {kind} {name!r} names {tensor_name!r}, which is not in the "
                                 f"graph") from None
