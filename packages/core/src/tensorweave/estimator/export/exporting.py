"""``Estimator.export_saved_model``: the PREDICT graph built on a serving input receiver, its variables restored
from a checkpoint, written as a SavedModel (tag ``serve``, one SignatureDef per export output) into a new
timestamped folder, through a temporary folder renamed at the end as TF 1.15 does."""

import collections
import logging
import os
import shutil
import time

from tensorweave import errors
from tensorweave.estimator.export.serving_input import SINGLE_RECEIVER_DEFAULT_NAME
from tensorweave.estimator.model_fn import ModeKeys
from tensorweave.framework import graph as graph_mod
from tensorweave.ops import variables
from tensorweave.runtime.session import Session
from tensorweave.saved_model import builder as builder_lib
from tensorweave.saved_model import signature_constants as sc
from tensorweave.saved_model import signature_def_utils, tag_constants
from tensorweave.train.saver import Saver

_log = logging.getLogger("tensorflow")
MAX_DIRECTORY_CREATION_ATTEMPTS = 10


def get_timestamped_export_dir(export_dir_base):
    """``export_dir_base/<seconds since the epoch>`` (bytes, as TF returns it), waiting for a second when taken."""
    for attempt in range(1, MAX_DIRECTORY_CREATION_ATTEMPTS + 1):
        result = os.path.join(os.fsencode(export_dir_base), str(int(time.time())).encode())
        if not os.path.exists(result):
            return result
        time.sleep(1)
        _log.warning("Directory %s already exists; retrying (attempt %d/%d)", os.fsdecode(result), attempt,
                     MAX_DIRECTORY_CREATION_ATTEMPTS)
    raise RuntimeError(f"Failed to obtain a unique export directory name after {MAX_DIRECTORY_CREATION_ATTEMPTS} "
                       f"attempts.")


def get_temp_export_dir(timestamped_export_dir):
    dirname, basename = os.path.split(timestamped_export_dir)
    return os.path.join(dirname, b"temp-" + basename)


def build_all_signature_defs(receiver_tensors, export_outputs, receiver_tensors_alternatives=None,
                             serving_only=True):
    """name -> SignatureDef for every export output (and every alternative receiver); an output that cannot be
    served from these receivers is left out and logged, as in TF."""
    if not isinstance(receiver_tensors, dict):
        receiver_tensors = {SINGLE_RECEIVER_DEFAULT_NAME: receiver_tensors}
    if export_outputs is None or not isinstance(export_outputs, dict):
        raise ValueError(f"export_outputs must be a dict and not{type(export_outputs)}")
    signatures, excluded = {}, {}
    receivers = [(None, receiver_tensors)] + list((receiver_tensors_alternatives or {}).items())
    for receiver_name, tensors in receivers:
        if not isinstance(tensors, dict):
            tensors = {SINGLE_RECEIVER_DEFAULT_NAME: tensors}
        for output_key, export_output in export_outputs.items():
            name = f"{output_key or 'None'}" if receiver_name is None else f"{receiver_name}:{output_key or 'None'}"
            try:
                signatures[name] = export_output.as_signature_def(tensors)
            except ValueError as e:
                excluded[name] = str(e)
    _log_signature_report(signatures, excluded)
    if serving_only:
        signatures = {k: v for k, v in signatures.items() if signature_def_utils.is_valid_signature(v)}
    return signatures


def _log_signature_report(signatures, excluded):
    friendly = {sc.CLASSIFY_METHOD_NAME: "Classify", sc.REGRESS_METHOD_NAME: "Regress",
                sc.PREDICT_METHOD_NAME: "Predict"}
    by_method = collections.OrderedDict((method, []) for method in friendly)
    for name, signature in signatures.items():
        by_method.setdefault(signature.method_name, []).append(name)
    for method, names in by_method.items():
        _log.info("Signatures INCLUDED in export for %s: %s", friendly.get(method, method), names or "None")
    if excluded:
        _log.info("Signatures EXCLUDED from export because they cannot be be served via TensorFlow Serving APIs:")
        for name, message in excluded.items():
            _log.info("'%s' : %s", name, message)
    if not signatures:
        _log.warning("Export includes no signatures!")
    elif sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in signatures:
        _log.warning("Export includes no default signature!")


def _add_meta_graph_for_mode(estimator, builder, serving_input_receiver_fn, checkpoint_path, mode):
    graph, _ = estimator._new_graph()
    with graph.as_default():
        receiver = serving_input_receiver_fn()
        spec = estimator._call_model_fn(receiver.features, getattr(receiver, "labels", None), mode, estimator.config)
        signatures = build_all_signature_defs(receiver.receiver_tensors, spec.export_outputs,
                                              receiver.receiver_tensors_alternatives, serving_only=True)
        with Session(config=estimator._session_config) as session:
            local_init_op = spec.scaffold.local_init_op
            if local_init_op is None:  # TF's Scaffold.default_local_init_op (Tensorweave has no lookup tables)
                local_init_op = variables.local_variables_initializer()
            # restores either format; writes TF's, so real TensorFlow (and its serving) loads the export too
            saver = spec.scaffold.saver or Saver(sharded=True, checkpoint_format="tensorflow")
            try:
                saver.restore(session, checkpoint_path)
            except errors.NotFoundError as e:
                raise ValueError(f"Could not load all requested variables from checkpoint. Please make sure your "
                                 f"model_fn does not expect variables that were not saved in the checkpoint.\n\n"
                                 f"Encountered error with mode `{mode}` while restoring checkpoint from: "
                                 f"`{checkpoint_path}`. Full Traceback:\n\n{e}") from e
            builder.add_meta_graph_and_variables(
                session, [tag_constants.SERVING], signature_def_map=signatures,
                assets_collection=graph_mod.get_collection(graph_mod.GraphKeys.ASSET_FILEPATHS),
                main_op=local_init_op, saver=saver)


def export_saved_model(estimator, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                       checkpoint_path=None, mode=ModeKeys.PREDICT):
    """Writes the SavedModel; returns its folder (bytes, as TF's)."""
    if serving_input_receiver_fn is None:
        raise ValueError("An input_receiver_fn must be defined.")
    if mode != ModeKeys.PREDICT:
        raise ValueError(f"export_saved_model exports the {ModeKeys.PREDICT!r} graph only here; got "
                         f"experimental_mode={mode!r}")
    checkpoint_path = checkpoint_path or estimator.latest_checkpoint()
    if not checkpoint_path:
        raise ValueError(f"Couldn't find trained model at {estimator.model_dir}.")
    export_dir = get_timestamped_export_dir(export_dir_base)
    temp_export_dir = get_temp_export_dir(export_dir)
    builder = builder_lib.SavedModelBuilder(os.fsdecode(temp_export_dir))
    _add_meta_graph_for_mode(estimator, builder, serving_input_receiver_fn, checkpoint_path, mode)
    builder.save(as_text)
    for dest_relative, source in (assets_extra or {}).items():
        dest = os.path.join(temp_export_dir, b"assets.extra", os.fsencode(dest_relative))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(source, dest)
    os.rename(temp_export_dir, export_dir)
    return export_dir
