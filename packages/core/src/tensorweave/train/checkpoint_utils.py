"""Reading checkpoints without a graph: list their variables, load one, wait for new ones."""

import os
import time

from tensorweave import errors
from tensorweave.formats import checkpoint_format
from tensorweave.train import checkpoint_management

__all__ = ["NewCheckpointReader", "checkpoints_iterator", "list_variables", "load_checkpoint", "load_variable"]


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
