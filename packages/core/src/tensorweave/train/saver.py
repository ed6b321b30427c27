"""tf.train.Saver: save variables to checkpoints and restore them, keeping the last few.

A Saver adds two sub-graphs at construction: save (read every variable, one SaveV2 per shard, merged
when sharded) and restore (RestoreV2, then assign every variable). Restore ops read and verify all
values before any assign runs, so a damaged checkpoint changes nothing. The checkpoint files are
written atomically by the kernels; the state file is updated after them, and old checkpoints are
deleted last. A Saver's first save to a save path claims it for this process (formats/checkpoint_files.py):
another process saving the same path fails there, naming this one, and a Saver deletes only checkpoints of
the save paths it claimed.
"""

import collections
import logging
import os
import re
import time
import uuid
import weakref

from tensorweave import dtypes, errors
from tensorweave.formats import checkpoint_files, checkpoint_format
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.importer import import_graph_def
from tensorweave.framework.tensor import Tensor
from tensorweave.ops import array_ops, control_flow_ops, io_ops
from tensorweave.train import checkpoint_management, meta_graph, meta_graph_collections
from tensorweave.train.meta_graph import MetaGraphDef, SaverDef

__all__ = ["Saver", "import_meta_graph"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


class _SaveSpec:
    """One tensor a checkpoint holds: its name and slice, how to read it and how to write it back."""

    __slots__ = ("name", "tensor", "slice_spec", "device", "shape", "restore")

    def __init__(self, name, tensor, slice_spec="", device="", shape=None, restore=None):
        self.name = name
        self.tensor = tensor
        self.slice_spec = slice_spec
        self.device = device
        self.shape = shape
        self.restore = restore  # fn(restored tensor) -> op, or None for a tensor that is only saved


def _var_name(var):
    name = var.name
    return name[:-2] if name.endswith(":0") else name


def _resource_handle(obj):
    if isinstance(obj, Tensor):
        return obj if obj.dtype is dtypes.resource else None
    handle = getattr(obj, "handle", None)
    if isinstance(handle, Tensor) and handle.dtype is dtypes.resource:
        return handle
    target = getattr(obj, "_gradient_target", None)
    handle = target() if callable(target) else None
    return handle if isinstance(handle, Tensor) and handle.dtype is dtypes.resource else None


def _variable_spec(name, var, slice_spec=""):
    handle = _resource_handle(var)
    if handle is None:
        raise TypeError(f"cannot save {var!r} under {name!r}: a Saver saves tf.Variables, PartitionedVariables "
                        f"and Tensors")
    dtype = var.dtype.base_dtype if hasattr(var.dtype, "base_dtype") else var.dtype
    if dtype is dtypes.resource:
        dtype = handle.op.get_attr("dtype")
    shape = var.shape if not isinstance(var, Tensor) else handle.op.get_attr("shape")
    with graph_mod.colocate_with(handle.op):
        value = apply_op("ReadVariableOp", [handle], {"dtype": dtype}, name="Read")

    def restore(restored):
        with graph_mod.colocate_with(handle.op):
            return apply_op("AssignVariableOp", [handle, restored], name="Assign")
    return _SaveSpec(name, value, slice_spec, handle.op.device, tensor_shape.as_shape(shape), restore)


def _partitions(obj):
    if isinstance(obj, list):  # the parts of one partitioned variable, gathered by _saveable_names
        return obj
    getter = getattr(obj, "_get_variable_list", None)
    return getter() if callable(getter) else None


def _specs_for(name, obj):
    parts = _partitions(obj)
    if parts is not None:
        specs = []
        for part in parts:
            info = getattr(part, "_save_slice_info", None)
            if info is None:
                raise ValueError(f"partition {part.name} of {name!r} has no slice information to save it by")
            specs.append(_variable_spec(name, part, info.spec))
        return specs
    if isinstance(obj, Tensor) and obj.dtype is not dtypes.resource:
        return [_SaveSpec(name, obj, "", obj.op.device, obj.shape)]
    return [_variable_spec(name, obj)]


def _saveable_names(var_list):
    """name -> object, from a dict, a list, or all global variables (plus the saveable-objects collection)."""
    if var_list is None:
        var_list = (graph_mod.get_collection(graph_mod.GraphKeys.GLOBAL_VARIABLES)
                    + graph_mod.get_collection("saveable_objects"))
    if isinstance(var_list, dict):
        return dict(var_list)
    named = {}
    seen = set()
    for var in var_list:
        if id(var) in seen:
            continue
        seen.add(id(var))
        parts = _partitions(var)
        info = getattr(var, "_save_slice_info", None)
        name = parts[0]._save_slice_info.full_name if parts else _var_name(var)
        if parts is None and info is not None:  # one part of a partitioned variable: saved as a slice of the
            name = info.full_name  # whole variable's name, as TF1 saves it
            if isinstance(named.setdefault(name, []), list):
                named[name].append(var)
                continue
        if name in named:
            raise ValueError(f"at least two variables have the same name: {name}; give them different names or "
                             f"pass var_list as a dict of checkpoint names")
        named[name] = var
    return named


class Saver:
    """Saves and restores variables. TF1's ``tf.train.Saver`` (checkpoint format: docs/checkpoint-format.md);
    ``checkpoint_format="tensorflow"`` writes TensorFlow's format instead (restoring reads either)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0,
                 name=None, restore_sequentially=False, saver_def=None, builder=None, defer_build=False,
                 allow_empty=False, write_version=SaverDef.V2, pad_step_number=False, save_relative_paths=False,
                 filename=None, checkpoint_format=None):
        if saver_def is not None:
            sharded, max_to_keep = saver_def.sharded, saver_def.max_to_keep
            keep_checkpoint_every_n_hours = saver_def.keep_checkpoint_every_n_hours
        self._var_list = var_list
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._checkpoint_format = _checkpoint_format_of(checkpoint_format)
        self._last_checkpoints = []  # [(prefix, time)] still kept, oldest first
        self._to_delete = []
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._claimed = []  # absolute save paths this Saver writes (claimed for this process)
        self._claim_token = uuid.uuid4().hex
        weakref.finalize(self, checkpoint_files.release, self._claim_token)
        self.saver_def = saver_def
        self._is_empty = False
        if saver_def is None and not defer_build:
            self.build()

    # ---- building --------------------------------------------------------------------------------------
    def build(self):
        if self.saver_def is not None:
            return
        names = _saveable_names(self._var_list)
        if not names:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("no variables to save: create variables before the Saver, or pass allow_empty=True")
        with graph_mod.name_scope(self._name or "save") as scope:
            specs = [s for name, obj in sorted(names.items()) for s in _specs_for(name, obj)]
            filename = array_ops.placeholder_with_default(self._filename or "model", [], name="filename")
            groups = self._groups(specs)
            save_tensor = self._add_save_ops(filename, groups)
            restore_op = self._add_restore_ops(filename, groups)
        self.saver_def = SaverDef(filename_tensor_name=filename.name, save_tensor_name=save_tensor.name,
                                  restore_op_name=restore_op.name, max_to_keep=self._max_to_keep,
                                  sharded=self._sharded, keep_checkpoint_every_n_hours=self._keep_every_n_hours,
                                  version=SaverDef.V2)
        self._scope = scope

    def _groups(self, specs):
        """Specs per save shard: one group, or one per device when sharded."""
        if not self._sharded:
            return [("", specs)]
        by_device = collections.OrderedDict()
        for s in specs:
            by_device.setdefault(s.device, []).append(s)
        return list(by_device.items())

    @staticmethod
    def _host(device):
        """Save and restore run on the CPU of the variable's task (tensors cross to it as needed)."""
        spec = DeviceSpec.from_string(device) if device else DeviceSpec()
        return DeviceSpec(spec.job, spec.replica, spec.task, "CPU", 0).to_string() if device else ""

    def _add_save_ops(self, filename, groups):
        if len(groups) == 1 and not self._sharded:
            specs = groups[0][1]
            save = io_ops.save_v2(filename, [s.name for s in specs], [s.slice_spec for s in specs],
                                  [s.tensor for s in specs], checkpoint_format=self._checkpoint_format)
            return control_flow_ops.with_dependencies([save], filename, name="control_dependency")
        parts_prefix = io_ops.string_join([filename, f"_temp_{uuid.uuid4().hex}/part"])
        part_names, saves = [], []
        for shard, (device, specs) in enumerate(groups):
            with graph_mod.device(self._host(device)):
                part = io_ops.sharded_filename(parts_prefix, shard, len(groups))
                part_names.append(part)
                saves.append(io_ops.save_v2(part, [s.name for s in specs], [s.slice_spec for s in specs],
                                            [s.tensor for s in specs], checkpoint_format=self._checkpoint_format))
        with graph_mod.control_dependencies(saves):
            with graph_mod.device(self._host(groups[0][0])):
                merge = io_ops.merge_v2_checkpoints(part_names, filename)
        return control_flow_ops.with_dependencies([merge], filename, name="control_dependency")

    def _add_restore_ops(self, filename, groups):
        restored = []
        for device, specs in groups:
            with graph_mod.device(self._host(device)):
                values = io_ops.restore_v2(filename, [s.name for s in specs], [s.slice_spec for s in specs],
                                           [s.tensor.dtype for s in specs], shapes=[s.shape for s in specs])
            restored.extend(zip(specs, values))
        reads = [v.op for _, v in restored]
        assigns = []
        with graph_mod.control_dependencies(reads):  # every value is read and verified before any assign
            for spec, value in restored:
                if spec.restore is not None:
                    assigns.append(spec.restore(value))
        return control_flow_ops.group(*assigns, *set(reads), name="restore_all")  # reads verify even unassigned

    # ---- saving -----------------------------------------------------------------------------------------
    @property
    def last_checkpoints(self):
        """Prefixes of the checkpoints still kept, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        self._last_checkpoints = [(p, time.time()) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        self._last_checkpoints = [(p, t) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths):
        """Takes over the checkpoints a previous run kept (those still on disk), so max_to_keep counts them."""
        kept = [p for p in checkpoint_paths if checkpoint_format.exists(p)]
        self.set_last_checkpoints_with_time(list(zip(kept, checkpoint_management.get_checkpoint_mtimes(kept))))

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False):
        """Writes a checkpoint; returns its prefix (``save_path-<global_step>`` when a step is given)."""
        if self._is_empty:
            return None
        self.build()
        if global_step is not None:
            step = global_step if isinstance(global_step, int) else int(_run_value(sess, global_step))
            checkpoint_file = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            checkpoint_file = os.fspath(save_path)
        hint = checkpoint_format.bad_prefix_hint(checkpoint_file)
        if hint is not None:
            raise ValueError(f"cannot save to {checkpoint_file!r}: {hint}")
        save_dir = os.path.dirname(checkpoint_file) or "."
        if not os.path.isdir(save_dir):
            raise ValueError(f"parent directory of {checkpoint_file!r} does not exist, so the checkpoint cannot be "
                             f"saved; create it first (os.makedirs({save_dir!r}))")
        self._claim(os.fspath(save_path))
        prefix = _as_text(sess.run(self.saver_def.save_tensor_name,
                                   {self.saver_def.filename_tensor_name: checkpoint_file}))
        if write_meta_graph:
            meta_graph.export_meta_graph(f"{checkpoint_file}.{meta_graph_suffix}", saver_def=self.saver_def,
                                         graph=sess.graph, strip_default_attrs=strip_default_attrs)
        self._record(prefix)
        with checkpoint_format.directory_lock(save_dir):  # no other writer lists a checkpoint between these two
            if write_state:
                relative = self._save_relative_paths or not (os.path.isabs(save_dir) or os.path.isabs(prefix))
                checkpoint_management.record_checkpoint(
                    save_dir, prefix, self.last_checkpoints, [t for _, t in self._last_checkpoints], self._owns,
                    latest_filename, self._next_checkpoint_time - self._keep_every_n_hours * 3600, relative)
            self._delete_old(meta_graph_suffix)
        return prefix

    def _claim(self, save_path):
        path = os.path.abspath(save_path)
        if path not in self._claimed:
            checkpoint_files.claim(path, self._claim_token)
            self._claimed.append(path)

    def _owns(self, prefix):
        """Whether ``prefix`` is a checkpoint of a save path this Saver claimed (the path, or it and a step)."""
        prefix = os.path.abspath(prefix)
        return any(prefix == path or re.fullmatch(re.escape(path) + r"-\d+", prefix) for path in self._claimed)

    def _record(self, prefix):
        """Adds ``prefix`` to the kept checkpoints; the ones beyond max_to_keep wait for deletion. Kept
        checkpoints of save paths this Saver does not write (taken over from the state file) are forgotten."""
        if not self._max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix and self._owns(p)]
        self._last_checkpoints.append((prefix, time.time()))
        while len(self._last_checkpoints) > self._max_to_keep:
            self._to_delete.append(self._last_checkpoints.pop(0))

    def _delete_old(self, meta_graph_suffix):
        """Deletes checkpoints dropped from the kept list, except one per keep_checkpoint_every_n_hours."""
        while self._to_delete:
            prefix, saved_at = self._to_delete.pop(0)
            if saved_at > self._next_checkpoint_time:
                self._next_checkpoint_time += self._keep_every_n_hours * 3600
                continue
            try:
                checkpoint_management.remove_checkpoint(prefix, meta_graph_suffix=meta_graph_suffix)
            except OSError as e:
                _log.warning("could not delete old checkpoint %s: %s", prefix, e)

    # ---- restoring -----------------------------------------------------------------------------------
    def restore(self, sess, save_path):
        """Sets every variable to its value in the checkpoint ``save_path`` (a prefix, as save returns)."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("cannot restore: save_path is None (no checkpoint was found?)")
        save_path = os.fspath(save_path)
        hint = checkpoint_format.bad_prefix_hint(save_path)
        if hint is not None:
            raise ValueError(f"cannot restore from {save_path!r}: {hint}")
        if not checkpoint_format.exists(save_path):
            raise ValueError(f"the passed save_path is not a valid checkpoint: {save_path!r} "
                             f"({save_path}.index does not exist)")
        _log.info("Restoring parameters from %s", save_path)  # TF's line: which checkpoint a run starts from
        try:
            sess.run(self.saver_def.restore_op_name, {self.saver_def.filename_tensor_name: save_path})
        except errors.NotFoundError as e:
            raise type(e)(e.node_def, e.op, (
                f"{e.message}\nRestoring from checkpoint {save_path!r} failed: the graph has a variable the "
                f"checkpoint lacks. Restore a subset with tf.train.Saver(var_list=...), or use the checkpoint "
                f"of this model.")) from None

    def as_saver_def(self):
        return self.saver_def

    def to_proto(self, export_scope=None):
        return self.saver_def


def _checkpoint_format_of(requested):
    """The format a Saver writes: its ``checkpoint_format``, else $TENSORWEAVE_CHECKPOINT_FORMAT, else Tensorweave's
    (docs/api.md, "Moving between TensorFlow and Tensorweave", says why)."""
    chosen = requested or os.environ.get("TENSORWEAVE_CHECKPOINT_FORMAT") or checkpoint_format.TENSORWEAVE
    if chosen not in (checkpoint_format.TENSORWEAVE, checkpoint_format.TENSORFLOW):
        where = "checkpoint_format" if requested else "$TENSORWEAVE_CHECKPOINT_FORMAT"
        raise ValueError(f"{where} is {chosen!r}; it must be {checkpoint_format.TENSORWEAVE!r} (Tensorweave's own "
                         f"format) or {checkpoint_format.TENSORFLOW!r} (TensorFlow's tensor bundle, which real "
                         f"TensorFlow restores)")
    return chosen


def _run_value(sess, tensor_or_var):
    return sess.run(tensor_or_var)


def _as_text(value):
    value = value.item() if hasattr(value, "item") else value
    return value.decode() if isinstance(value, bytes) else str(value)


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, *, input_map=None,
                      return_elements=None):
    """Adds the meta graph's graph and collections to the default graph; returns a Saver for it (its SaverDef's,
    else a new one over its variables, else None). Reads TF's binary or text ``.meta`` and earlier Tensorweave
    JSON ones. ``input_map`` and ``return_elements`` are passed on to the import as in TF1."""
    if isinstance(meta_graph_or_file, MetaGraphDef):
        meta = meta_graph_or_file
    else:
        meta = meta_graph.read_meta_graph_file(os.fspath(meta_graph_or_file))
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = type(graph_def).FromString(graph_def.SerializeToString())
        for node in graph_def.node:
            node.device = ""
    elements = import_graph_def(graph_def, input_map=input_map, return_elements=return_elements,
                                name=import_scope or "", producer_op_list=meta.meta_info_def.stripped_op_list)
    graph = graph_mod.get_default_graph()
    meta_graph_collections.restore_collections(meta, graph, import_scope)
    if meta.HasField("saver_def"):
        scope = f"{import_scope}/" if import_scope else ""
        saver_def = SaverDef()
        saver_def.CopyFrom(meta.saver_def)
        for key in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            setattr(saver_def, key, scope + getattr(saver_def, key))
        saver = Saver(saver_def=saver_def)
    elif graph.get_collection(graph_mod.GraphKeys.GLOBAL_VARIABLES):
        saver = Saver()
    else:
        saver = None
    return saver if return_elements is None else (saver, elements)