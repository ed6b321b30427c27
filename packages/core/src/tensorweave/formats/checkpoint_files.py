"""What the writers of one checkpoint directory share: temporaries named after their writer, the directory
lock, the claim that makes one process the writer of a save path, and removing what dead writers left.

A writer is a process, known by its pid and host (with its pid namespace). Whatever a save writes goes first
to a temporary ``<final name>.tempstate-<pid>@<host>-<random>``, so a later save can tell a dead writer's leftovers (its pid
is not alive on this host, or the file is untouched for ``STALE_AFTER_SECONDS``) from a live writer's work,
which nothing but that writer touches. Renames into place, deletions and the state file happen under the
directory lock (a POSIX lock on ``<dir>/.checkpoint.lock``, dropped by the kernel when its holder dies); a
holder notes what it is committing there first, so the next holder undoes a commit its writer died in.
See docs/checkpoint-format.md ("Several writers").
"""

import collections
import errno
import fcntl
import json
import logging
import os
import re
import shutil
import socket
import sys
import threading
import time
import uuid

from tensorweave import errors

__all__ = ["DirectoryLock", "STALE_AFTER_SECONDS", "claim", "release", "remove_stale", "temp_path"]

STALE_AFTER_SECONDS = 24 * 3600  # a temporary untouched this long is stale whoever wrote it (other hosts, reused pids)
LOCK_TIMEOUT_SECONDS = 300.0
LOCK_SUFFIX = ".lock"  # lock files are hidden, so globs such as "model.ckpt*" and "checkpoint*" do not catch them
DIRECTORY_LOCK = ".checkpoint" + LOCK_SUFFIX
CLAIM_SUFFIX = ".writer" + LOCK_SUFFIX



def _machine():
    """This host, and its pid namespace where there is one: containers that share a host name (and a volume)
    but not their pids must not judge each other's pids."""
    try:
        namespace = os.readlink("/proc/self/ns/pid").strip("pid:[]")
    except OSError:
        return socket.gethostname()
    return f"{socket.gethostname()}+{namespace}"


_MACHINE = _machine()
_TEMP = re.compile(r"\.tempstate-(\d+)@(.+)-[0-9a-f]{32}$")
_OLD_TEMP = re.compile(r"\.tempstate[0-9a-f]{32}$")  # written before temporaries named their writer
_PARTS_DIR = re.compile(r"_temp_[0-9a-f]{32}$")  # a sharded save's parts (train/saver.py)
_BUSY = (errno.EACCES, errno.EAGAIN)
_log = logging.getLogger("tensorflow")  # TF1 logs through the logger tf.logging configures


def temp_path(path, pid=None, host=None):
    """The name ``path`` is written under until it is complete."""
    return f"{path}.tempstate-{pid or os.getpid()}@{host or _MACHINE}-{uuid.uuid4().hex}"


def is_temporary(name):
    return bool(_TEMP.search(name) or _OLD_TEMP.search(name))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _gone(pid, host):
    """Whether the writer (pid, host) is known to be dead: only a local one can be checked."""
    return host == _MACHINE and not _alive(pid)


def _temp_is_stale(name, mtime, now):
    if now - mtime > STALE_AFTER_SECONDS:
        return True
    m = _TEMP.search(name)
    return bool(m) and _gone(int(m.group(1)), m.group(2))


def _parts_are_stale(directory, now):
    """A sharded save's part directory is stale when every writer it names is dead, or nothing in it moved
    for STALE_AFTER_SECONDS (its own name cannot say who made it: the graph fixes it)."""
    writers, newest = set(), os.stat(directory).st_mtime
    for entry in os.scandir(directory):
        newest = max(newest, entry.stat().st_mtime)
        m = _TEMP.search(entry.name)
        if m:
            writers.add((int(m.group(1)), m.group(2)))
        elif entry.name == DIRECTORY_LOCK:
            holder = _read_holder(entry.path)
            if holder:
                writers.add((holder.get("pid"), holder.get("machine")))
    if now - newest > STALE_AFTER_SECONDS:
        return True
    return bool(writers) and all(isinstance(pid, int) and _gone(pid, host) for pid, host in writers)


def remove_stale(directory):
    """Removes the temporaries and sharded-save part directories in ``directory`` whose writers are gone."""
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return
    for entry in entries:
        try:
            if is_temporary(entry.name):
                if _temp_is_stale(entry.name, entry.stat().st_mtime, now):
                    _log.info("removing %s, left by a save that did not finish", entry.path)
                    os.remove(entry.path)
            elif _PARTS_DIR.search(entry.name) and entry.is_dir() and _parts_are_stale(entry.path, now):
                _log.info("removing %s, left by a sharded save that did not finish", entry.path)
                shutil.rmtree(entry.path, ignore_errors=True)
        except FileNotFoundError:
            continue


# ---- locks ------------------------------------------------------------------------------------------
def _holder(**extra):
    return {"pid": os.getpid(), "host": socket.gethostname(), "machine": _MACHINE, "since": time.time(),
            "command": " ".join(sys.argv)[:200], **extra}


def _read_holder(path_or_fd):
    try:
        if isinstance(path_or_fd, int):
            text = os.pread(path_or_fd, 1 << 16, 0)
        else:
            with open(path_or_fd, "rb") as f:
                text = f.read(1 << 16)
        holder = json.loads(text)
        return holder if isinstance(holder, dict) else None
    except (OSError, ValueError):
        return None


def _holder_of_lock(fd, wait=2.0):
    """The holder record of a lock another process holds: it writes the record right after taking the lock, so
    an empty one is read again for up to ``wait`` seconds before the process is called unknown."""
    deadline = time.monotonic() + wait
    holder = _read_holder(fd)
    while holder is None and time.monotonic() < deadline:
        time.sleep(0.01)
        holder = _read_holder(fd)
    return holder


def _write_holder(fd, holder, durable=False):
    data = json.dumps(holder).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
    if durable:
        os.fsync(fd)


def _describe(holder):
    if not holder:
        return "another process (it did not say which)"
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder.get("since", 0)))
    return f"pid {holder.get('pid')} on host {holder.get('host')} ({holder.get('command') or '?'}; since {since})"


_unlockable_warned = set()


def _try_lock(fd, path):
    """True once locked; False while another process holds it; True (unlocked) where the file system has no locks."""
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as e:
        if e.errno in _BUSY:
            return False
        if path not in _unlockable_warned:
            _unlockable_warned.add(path)
            _log.warning("cannot lock %s (%s): this file system has no POSIX locks, so another process saving into "
                         "the same directory at the same time would go unnoticed", path, e)
        return True


_table_lock = threading.Lock()
_thread_locks = {}  # directory lock path -> threading.Lock: POSIX locks do not exclude threads of one process
_held = threading.local()  # .locks: {lock path: the DirectoryLock this thread holds}


class DirectoryLock:
    """Held while checkpoints of a directory are committed or deleted and while its state file is rewritten.

    ``unfinished`` is what a holder that died mid-commit noted (``note``), for this holder to undo and then
    set to None; a note stays until then, and a holder's own note is cleared when it releases the lock. A thread that holds it may enter it again (a no-op), so a caller
    can hold it across several of these steps."""

    def __init__(self, directory, timeout=LOCK_TIMEOUT_SECONDS):
        self.path = os.path.join(os.path.abspath(directory), DIRECTORY_LOCK)
        self.timeout = timeout
        self.unfinished = None
        self._fd = None
        self._outer = None

    @property
    def outermost(self):
        """Whether this entry took the lock (rather than entering it again)."""
        return self._outer is None

    def __enter__(self):
        held = _held.__dict__.setdefault("locks", {})
        self._outer = held.get(self.path)
        if self._outer is not None:
            self._fd = self._outer._fd  # never a second descriptor: closing it would drop the POSIX lock
            return self
        deadline = time.monotonic() + self.timeout
        with _table_lock:
            thread_lock = _thread_locks.setdefault(self.path, threading.Lock())
        if not thread_lock.acquire(timeout=self.timeout):
            raise self._timed_out(None)
        self._thread_lock = thread_lock
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            while not _try_lock(self._fd, self.path):
                if time.monotonic() > deadline:
                    raise self._timed_out(_read_holder(self._fd))
                time.sleep(0.005)
            previous = _read_holder(self._fd) or {}
            self.unfinished = previous.get("committing")
            _write_holder(self._fd, _holder())
        except BaseException:
            self._release()
            raise
        held[self.path] = self
        return self

    def note(self, committing):
        """Records what is being committed, durably, before the first rename."""
        _write_holder(self._fd, _holder(committing=committing), durable=True)

    def __exit__(self, *exc):
        if self._outer is not None:
            return
        del _held.locks[self.path]
        try:
            _write_holder(self._fd, _holder(committing=self.unfinished) if self.unfinished else _holder())
        finally:
            self._release()

    def _release(self):
        if self._fd is not None:
            os.close(self._fd)  # closing drops the POSIX lock
            self._fd = None
        self._thread_lock.release()

    def _timed_out(self, holder):
        return errors.DeadlineExceededError(None, None, (
            f"could not lock checkpoint directory {os.path.dirname(self.path)!r} in {self.timeout:g} s: it is held by "
            f"{_describe(holder)}, which is saving or deleting a checkpoint there. If that process hangs, stop it."))


_claims = {}  # claim file path -> [fd, set of owner tokens]: one open file per claim and process
_released = collections.deque()  # owners whose claims go at the next chance (release runs in finalizers)


def claim(save_path, owner):
    """Makes this process the one writer of the checkpoints ``save_path`` and ``save_path-<step>`` while
    ``owner`` (a token) holds the claim; raises AlreadyExistsError naming the process that has it."""
    directory, name = os.path.split(os.path.abspath(save_path))
    path = os.path.join(directory, f".{name}{CLAIM_SUFFIX}")
    with _table_lock:
        _drop_released()
        held = _claims.get(path)
        if held is not None:
            held[1].add(owner)
            return
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_lock(fd, path):
            holder = _holder_of_lock(fd)
            os.close(fd)
            raise errors.AlreadyExistsError(None, None, (
                f"cannot save checkpoint {save_path!r}: its checkpoints are being written by {_describe(holder)}. "
                f"Two processes saving the same checkpoints delete each other's (neither's max_to_keep knows the "
                f"other's). Save from one process: under MPI only the chief saves (MonitoredTrainingSession does "
                f"so unless is_chief=True is passed on every rank; or checkpoint_dir=twd.chief_only(dir)); or give "
                f"each process its own save path."))
        _write_holder(fd, _holder())
        _claims[path] = [fd, {owner}]


def release(owner):
    """Drops every claim ``owner`` holds; a claim no owner holds any more is released for other processes.

    Called by a Saver's finalizer, which may run inside ``claim`` (a garbage collection): then the claims go
    when that call, or the next, takes the table."""
    _released.append(owner)
    if _table_lock.acquire(blocking=False):
        try:
            _drop_released()
        finally:
            _table_lock.release()


def _drop_released():
    while _released:
        owner = _released.popleft()
        for path, (fd, owners) in list(_claims.items()):
            owners.discard(owner)
            if not owners:
                del _claims[path]
                os.close(fd)


def _forget_in_child():
    """A forked child holds none of its parent's POSIX locks: it must claim and lock for itself."""
    global _table_lock
    for fd, _ in _claims.values():
        os.close(fd)
    _claims.clear()
    _thread_locks.clear()
    _released.clear()
    _table_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)
