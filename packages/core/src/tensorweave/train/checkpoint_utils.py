"""Reading checkpoints: list their variables, load one, wait for new ones, and initialize variables from one
(``init_from_checkpoint``)."""

import os
import time

from tensorweave import errors
from tensorweave.formats import checkpoint_format
from tensorweave.framework import graph as graph_mod
from tensorweave.ops import io_ops, state_ops, variable_scope, variables
from tensorweave.train import checkpoint_management

__all__ = ["NewCheckpointReader", "checkpoints_iterator", "init_from_checkpoint", "list_variables",
           "load_checkpoint", "load_variable"]


def _checkpoint_prefix(ckpt_dir_or_file):
    """A directory means its latest checkpoint; a prefix is itself; an index or data file gets a hint."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = checkpoint_management.latest_checkpoint(path)
        if latest is None:
            raise errors.NotFoundError(None, None, f"directory {path!r} holds no (intact) checkpoint")
        return latest
    hint = checkpoint_format.bad_prefix_hint(path)
    if hint is not None:
        raise ValueError(hint)
    return path


def NewCheckpointReader(filepattern):  # noqa: N802 - TF's name
    """A reader of one checkpoint prefix: ``get_tensor``, ``has_tensor``, ``get_variable_to_shape_map``."""
    return CheckpointReader(_checkpoint_prefix(filepattern))


class CheckpointReader(checkpoint_format.CheckpointReader):
    """TF1's reader API over the checkpoint format."""

    def get_variable_to_shape_map(self):
        return self.variable_to_shape_map()

    def get_variable_to_dtype_map(self):
        return self.variable_to_dtype_map()


def load_checkpoint(ckpt_dir_or_file):
    return NewCheckpointReader(ckpt_dir_or_file)


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of every tensor in the checkpoint (a directory means its latest checkpoint), by name."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted(reader.variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """The numpy value saved under ``name`` (a trailing ':0' is ignored, as in TF)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1, timeout=None):
    """Polls until the latest checkpoint differs from ``last_checkpoint``; returns it, or None at the timeout."""
    stop_time = None if timeout is None else time.time() + timeout
    while True:
        path = checkpoint_management.latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            return path
        if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint of ``checkpoint_dir`` as it appears (for evaluation jobs)."""
    checkpoint = None
    while True:
        new = wait_for_new_checkpoint(checkpoint_dir, checkpoint, timeout=timeout)
        if new is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        start = time.time()
        checkpoint = new
        yield checkpoint
        time.sleep(max(0.0, min_interval_secs - (time.time() - start)))


# ---- init_from_checkpoint -------------------------------------------------------------------------------------
def _is_variable_or_parts(value):
    return isinstance(value, variables.Variable) or (
        isinstance(value, list) and value and all(isinstance(v, variables.Variable) for v in value))


def _parts(name, store_vars):
    """The parts ``name/part_0``, ``name/part_1``, ... of a partitioned variable, or None."""
    found, i = [], 0
    while f"{name}/part_{i}" in store_vars:
        found.append(store_vars[f"{name}/part_{i}"])
        i += 1
    return found or None


def _load_into(variable, prefix, tensor_name, slice_spec=""):
    """Makes ``variable``'s initializer read ``tensor_name`` (a slice of it, for a part) from the checkpoint."""
    with variable.graph.as_default(), graph_mod.device(variable.device), graph_mod.device("/cpu:0"):
        restored = io_ops.restore_v2(prefix, [tensor_name], [slice_spec], [variable.dtype],
                                     name="checkpoint_initializer")[0]
    restored.set_shape(variable.get_shape())
    initialize_with(variable, restored)


def initialize_with(variable, value):
    """Makes ``variable``'s initializer assign ``value`` (a tensor) instead of its initial value."""
    with variable.graph.as_default(), graph_mod.colocate_with(variable.handle.op):
        variable._initializer_op = state_ops.assign_variable_op(variable.handle, value, name="Assign")
    variable._initial_value = value


def _load_variable_or_parts(target, prefix, tensor_name):
    if isinstance(target, variables.Variable) and target._get_save_slice_info() is None:
        _load_into(target, prefix, tensor_name)
        return
    for part in (target if isinstance(target, list) else [target]):
        info = part._get_save_slice_info()
        _load_into(part, prefix, tensor_name, info.spec if info is not None else "")


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Replaces the initializers of variables so that they load values from a checkpoint (TF 1.15's rules).

    ``assignment_map`` maps checkpoint names to current variables: ``{'ckpt/scope/': 'scope/'}`` loads every
    variable of ``scope/`` (made by get_variable) from the same name under ``ckpt/scope/`` (``'/'`` is the
    checkpoint's root); ``{'ckpt_name': 'var_name'}`` or ``{'ckpt_name': variable}`` (a Variable or a list of
    partitions) loads one. The values arrive when the initializers run (``global_variables_initializer``).
    """
    prefix = _checkpoint_prefix(ckpt_dir_or_file)
    reader = CheckpointReader(prefix)
    shapes = reader.variable_to_shape_map()
    store_vars = variable_scope._variable_store()._vars
    for tensor_name, current in sorted(assignment_map.items(), key=lambda item: item[0]):
        if _is_variable_or_parts(current):
            target = current
        else:
            target = store_vars[current] if current in store_vars else _parts(current, store_vars)
        if target is not None:
            if tensor_name not in shapes:
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} checkpoint (it holds: "
                                 f"{', '.join(sorted(shapes))})")
            if isinstance(target, variables.Variable) and not target.get_shape().is_compatible_with(
                    shapes[tensor_name]):
                raise ValueError(f"Shape of variable {target.name} ({target.get_shape()}) doesn't match with shape "
                                 f"of tensor {tensor_name} ({shapes[tensor_name]}) from checkpoint reader.")
            _load_variable_or_parts(target, prefix, tensor_name)
            continue
        _init_scope_from_checkpoint(tensor_name, current, shapes, store_vars, prefix, ckpt_dir_or_file)


def _init_scope_from_checkpoint(tensor_name, current, shapes, store_vars, prefix, ckpt_dir_or_file):
    """``{'ckpt_scope/': 'scope/'}``: each get_variable variable under ``scope/`` from its name under the other."""
    scopes = current[:current.rindex("/")] if "/" in current else ""
    if not tensor_name.endswith("/"):
        raise ValueError(f"Assignment map with scope only name {scopes} should map to scope only {tensor_name}. "
                         f"Should be 'scope/': 'other_scope/'. (No variable named {current!r} was made by "
                         f"tf.get_variable.)")
    names = {name[:name.index("/part_")] if "/part_" in name else name
             for name in store_vars if not scopes or name.startswith(scopes + "/")}
    for var_name in sorted(names):
        full_name = var_name[len(scopes):]
        if current != "/":
            full_name = full_name[1:]
        if tensor_name != "/":
            full_name = tensor_name + full_name
        full_name = full_name.rstrip("/")
        if full_name not in shapes:
            raise ValueError(f"Tensor {full_name} ({var_name[len(scopes) + 1:]} in {tensor_name}) is not found in "
                             f"{ckpt_dir_or_file} checkpoint")
        target = store_vars[var_name] if var_name in store_vars else _parts(var_name, store_vars)
        _load_variable_or_parts(target, prefix, full_name)
