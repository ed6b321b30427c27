"""TF1's ``tf.saved_model.loader``: loads a SavedModel (real TensorFlow's or Tensorweave's) into a session."""

import os

from google.protobuf import message, text_format

from tensorweave import errors
from tensorweave.protos.meta_graph import SavedModel
from tensorweave.saved_model import constants
from tensorweave.train.saver import import_meta_graph

__all__ = ["contains_saved_model", "load", "maybe_saved_model_directory"]


def maybe_saved_model_directory(export_dir):
    """Whether ``export_dir`` holds a SavedModel (its saved_model.pb or .pbtxt)."""
    export_dir = os.fsdecode(export_dir)  # TF takes bytes too (Estimator.export_saved_model returns bytes)
    return any(os.path.isfile(os.path.join(export_dir, name))
               for name in (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT))


contains_saved_model = maybe_saved_model_directory


def read_saved_model(export_dir):
    """The SavedModel proto of ``export_dir``; a file that does not parse is a DataLossError naming it."""
    export_dir = os.fsdecode(export_dir)  # TF takes bytes too (Estimator.export_saved_model returns bytes)
    binary = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    text = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    proto = SavedModel()
    if os.path.isfile(binary):
        with open(binary, "rb") as f:
            data = f.read()
        try:
            proto.ParseFromString(data)
        except message.DecodeError as e:
            raise errors.DataLossError(None, None, f"SavedModel file {binary} is damaged ({len(data)} bytes do not "
                                                   f"parse as a SavedModel: {e}); export the model again") from None
    elif os.path.isfile(text):
        with open(text, encoding="utf-8", errors="replace") as f:
            try:
                text_format.Merge(f.read(), proto)
            except text_format.ParseError as e:
                raise errors.DataLossError(None, None, f"SavedModel file {text} is damaged: {e}") from None
    else:
        raise OSError(f"SavedModel file does not exist at: {export_dir}/{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                      f"{constants.SAVED_MODEL_FILENAME_PB}}}")
    return proto


def _meta_graph_for(saved_model, tags, export_dir):
    wanted = set(tags)
    for meta in saved_model.meta_graphs:
        if set(meta.meta_info_def.tags) == wanted:
            return meta
    available = [list(m.meta_info_def.tags) for m in saved_model.meta_graphs]
    raise RuntimeError(f"MetaGraphDef associated with tags {sorted(wanted)} could not be found in SavedModel "
                       f"{export_dir}. Available tag-sets: {available}")


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Imports the meta graph tagged ``tags`` into ``sess.graph``, restores its variables, runs its main op
    (with its assets' paths fed); returns the MetaGraphDef (its ``signature_def`` names the tensors to run)."""
    export_dir = os.fsdecode(export_dir)  # TF takes bytes too (Estimator.export_saved_model returns bytes)
    meta = _meta_graph_for(read_saved_model(export_dir), tags, export_dir)
    with sess.graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
        variables = os.path.join(export_dir, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME)
        if saver is not None and os.path.exists(variables + ".index"):
            saver.restore(sess, variables)
        scope = f"{import_scope}/" if import_scope else ""
        assets = {scope + a.tensor_info.name: os.path.join(export_dir, constants.ASSETS_DIRECTORY, a.filename)
                  for a in meta.asset_file_def}
        init = sess.graph.get_collection(constants.MAIN_OP_KEY) or \
            sess.graph.get_collection(constants.LEGACY_INIT_OP_KEY)
        if init:
            sess.run(init[0], feed_dict=assets)
    return meta
