"""The checkpoint state file (TF1's ``checkpoint`` text file) and finding the newest usable checkpoint.

The state file names the latest checkpoint and the ones still kept. It is rewritten atomically under the
directory lock, and only after the checkpoint it names is complete, so it never points at half a
checkpoint; a Saver's rewrite keeps the entries of other writers' checkpoints. If a checkpoint it names
was lost or damaged anyway, ``latest_checkpoint`` falls back to the newest one that is intact.
"""

import json
import logging
import os
import re
import time

from tensorweave import errors
from tensorweave.formats import checkpoint_format

__all__ = ["CheckpointState", "checkpoint_exists", "generate_checkpoint_state_proto", "get_checkpoint_mtimes",
           "get_checkpoint_state", "latest_checkpoint", "remove_checkpoint", "update_checkpoint_state"]

_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures
_LINE = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*$")


class CheckpointState:
    """The contents of a state file (TF1's CheckpointState proto, same field names)."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=(), all_model_checkpoint_timestamps=(),
                 last_preserved_timestamp=0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def __str__(self):
        lines = [f"model_checkpoint_path: {json.dumps(self.model_checkpoint_path)}"]
        lines += [f"all_model_checkpoint_paths: {json.dumps(p)}" for p in self.all_model_checkpoint_paths]
        lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append(f"last_preserved_timestamp: {self.last_preserved_timestamp!r}")
        return "\n".join(lines) + "\n"

    @classmethod
    def parse(cls, text, where):
        state = cls()
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            m = _LINE.match(line)
            try:
                key, value = m.group(1), json.loads(m.group(2))
                if key == "model_checkpoint_path":
                    state.model_checkpoint_path = str(value)
                elif key == "all_model_checkpoint_paths":
                    state.all_model_checkpoint_paths.append(str(value))
                elif key == "all_model_checkpoint_timestamps":
                    state.all_model_checkpoint_timestamps.append(float(value))
                elif key == "last_preserved_timestamp":
                    state.last_preserved_timestamp = float(value)
            except (AttributeError, ValueError, TypeError):
                raise errors.DataLossError(None, None, f"checkpoint state file {where!r} line {number} does not "
                                                       f"parse: {line!r}") from None
        return state

    def __eq__(self, other):
        return isinstance(other, CheckpointState) and str(self) == str(other)

    def __repr__(self):
        return f"CheckpointState({str(self).strip()!r})"


def _state_path(save_dir, latest_filename):
    return os.path.join(save_dir, latest_filename or "checkpoint")


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    """A CheckpointState whose last path is ``model_checkpoint_path``; paths under ``save_dir`` made relative
    when ``model_checkpoint_path`` is relative."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if not os.path.isabs(save_dir) and not os.path.isabs(model_checkpoint_path):
        def rel(p):
            return os.path.relpath(p, save_dir) if not os.path.isabs(p) else p
        model_checkpoint_path, paths = rel(model_checkpoint_path), [rel(p) for p in paths]
    return CheckpointState(model_checkpoint_path, paths, all_model_checkpoint_timestamps or [],
                           last_preserved_timestamp or 0.0)


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None, latest_filename=None,
                            all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    """Rewrites the state file of ``save_dir`` atomically (temporary file, fsync, rename) with exactly these
    entries, as TF1 does (Saver.save keeps other writers' entries: ``record_checkpoint``)."""
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, all_model_checkpoint_paths,
                                            all_model_checkpoint_timestamps, last_preserved_timestamp)
    _write_state(save_dir, latest_filename, model_checkpoint_path, lambda: state)


def _write_state(save_dir, latest_filename, model_checkpoint_path, make_state):
    """Writes ``make_state()`` (called under the directory lock) as the state file."""
    if latest_filename is not None and os.path.basename(latest_filename) != latest_filename:
        raise ValueError(f"latest_filename must be a file name, not a path: {latest_filename!r}")
    path = _state_path(save_dir, latest_filename)
    if os.path.abspath(path) == os.path.abspath(model_checkpoint_path):
        raise errors.InvalidArgumentError(None, None, (
            f"the checkpoint {model_checkpoint_path!r} and its state file would have the same name; "
            f"choose another save_path or latest_filename"))
    with checkpoint_format.directory_lock(save_dir):
        checkpoint_format.atomic_write(path, str(make_state()).encode())


def record_checkpoint(save_dir, model_checkpoint_path, kept, timestamps, owns, latest_filename=None,
                      last_preserved_timestamp=0.0, relative=False):
    """What Saver.save writes to the state file: ``model_checkpoint_path`` is the latest, and of the
    checkpoints ``owns(prefix)`` says are this writer's only ``kept`` (with their ``timestamps``) are listed;
    the other entries stay while their checkpoints exist, so two writers of one directory keep each other's.
    Paths are absolute (or relative to the working directory); ``relative`` writes them relative to ``save_dir``."""
    def make_state():
        entries = dict(zip(map(os.path.abspath, kept), timestamps))
        for prefix, stamp in _existing_entries(save_dir, latest_filename):
            if not owns(prefix) and prefix not in entries and checkpoint_format.exists(prefix):
                entries[prefix] = stamp
        latest = os.path.abspath(model_checkpoint_path)
        entries[latest] = entries.pop(latest, time.time())
        ordered = sorted(entries, key=lambda p: (p == latest, entries[p]))
        base = os.path.abspath(save_dir)

        def written(p):
            return os.path.relpath(p, base) if relative and os.path.dirname(p) == base else p
        return CheckpointState(written(latest), [written(p) for p in ordered], [entries[p] for p in ordered],
                               last_preserved_timestamp)
    _write_state(save_dir, latest_filename, model_checkpoint_path, make_state)


def _existing_entries(save_dir, latest_filename):
    """[(absolute prefix, timestamp)] of the state file as it is (the index's time where it records none)."""
    try:
        state = get_checkpoint_state(save_dir, latest_filename)
    except errors.DataLossError:
        return []
    if state is None:
        return []
    paths = [os.path.abspath(p) for p in state.all_model_checkpoint_paths]
    stamps = state.all_model_checkpoint_timestamps
    if len(stamps) != len(paths):
        stamps = [os.path.getmtime(checkpoint_format.index_path(p)) if checkpoint_format.exists(p) else 0.0
                  for p in paths]
    return list(zip(paths, stamps))


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of ``checkpoint_dir`` (relative paths resolved against it), or None."""
    path = _state_path(checkpoint_dir, latest_filename)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        state = CheckpointState.parse(f.read(), path)
    if not state.model_checkpoint_path:
        raise errors.DataLossError(None, None, f"checkpoint state file {path!r} names no model_checkpoint_path")

    def resolve(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
    state.model_checkpoint_path = resolve(state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [resolve(p) for p in state.all_model_checkpoint_paths]
    return state


def _looks_intact(prefix):
    """The cheap check: the index parses and its checksum holds, and every data file has its recorded size."""
    return checkpoint_format.looks_intact(prefix)


def _candidates(checkpoint_dir, latest_filename):
    """(state or None, every checkpoint prefix of the directory, newest first: the state file's, then others)."""
    try:
        state = get_checkpoint_state(checkpoint_dir, latest_filename)
    except errors.DataLossError as e:
        _log.warning("%s; looking for checkpoints in the directory instead", e)
        state = None
    ordered = [] if state is None else [state.model_checkpoint_path] + state.all_model_checkpoint_paths[::-1]
    found = []
    if os.path.isdir(checkpoint_dir):
        found = [os.path.join(checkpoint_dir, f[:-len(checkpoint_format.INDEX_SUFFIX)])
                 for f in os.listdir(checkpoint_dir) if f.endswith(checkpoint_format.INDEX_SUFFIX)]
        found.sort(key=_index_mtime, reverse=True)
    seen, prefixes = set(), []
    for prefix in ordered + found:
        key = os.path.abspath(prefix)
        if key not in seen:
            seen.add(key)
            prefixes.append(prefix)
    return state, prefixes


def _index_mtime(prefix):
    try:
        return os.path.getmtime(checkpoint_format.index_path(prefix))
    except OSError:
        return 0.0


def checkpoint_candidates(checkpoint_dir, latest_filename=None):
    """Intact-looking checkpoints of ``checkpoint_dir``, newest first (restoring falls back along this list,
    verifying each as it reads it)."""
    return [p for p in _candidates(checkpoint_dir, latest_filename)[1] if _looks_intact(p)]


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest intact checkpoint in ``checkpoint_dir``, or None.

    That is the state file's latest checkpoint; if it is missing or damaged (its index, or any data file's
    size or CRC-32: ``checkpoint_format.is_intact``), the newest intact one among those the state file
    keeps, then among the directory's other checkpoints (with a warning).
    """
    state, prefixes = _candidates(checkpoint_dir, latest_filename)
    for prefix in prefixes:
        if checkpoint_format.is_intact(prefix):
            if state is not None and os.path.abspath(prefix) != os.path.abspath(state.model_checkpoint_path):
                _log.warning("checkpoint %s named by the state file is missing or damaged; using %s instead",
                             state.model_checkpoint_path, prefix)
            return prefix
    return None


def checkpoint_exists(checkpoint_prefix):
    """Whether a checkpoint with this prefix exists (its index does)."""
    return checkpoint_format.exists(checkpoint_prefix)


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification times of the given checkpoints' index files (missing ones are skipped)."""
    return [os.path.getmtime(checkpoint_format.index_path(p)) for p in checkpoint_prefixes
            if checkpoint_format.exists(p)]


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=None, meta_graph_suffix="meta"):
    """Deletes a checkpoint's files (index first, then data, then its meta graph), under the directory lock."""
    checkpoint_format.delete_checkpoint(checkpoint_prefix)
    meta = f"{checkpoint_prefix}.{meta_graph_suffix}"
    if os.path.exists(meta):
        os.remove(meta)
