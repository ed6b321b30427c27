"""TF1's ``tf.saved_model.simple_save``: a serving SavedModel with one predict signature, in one call."""

from tensorweave.framework import graph as graph_mod
from tensorweave.saved_model import signature_constants, tag_constants
from tensorweave.saved_model.builder import SavedModelBuilder
from tensorweave.saved_model.signature_def_utils import predict_signature_def

__all__ = ["simple_save"]


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Saves ``session``'s graph and variables to ``export_dir`` tagged "serve", with the predict signature
    ``inputs -> outputs`` ({key: tensor} each) as the default serving signature."""
    signature_def_map = {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(inputs, outputs)}
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, tags=[tag_constants.SERVING], signature_def_map=signature_def_map,
        assets_collection=session.graph.get_collection(graph_mod.GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    return builder.save()
