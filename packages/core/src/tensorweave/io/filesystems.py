"""Where gfile's paths live: local paths through the OS, ``scheme://`` paths through fsspec.

A path without a scheme (or with ``file://``) is local and handled with ``os``, ``shutil`` and ``glob``, so
results keep the form the caller gave (relative stays relative). Any other scheme goes to the fsspec
implementation registered for it (``memory://`` is built in; ``s3://``, ``gs://``, ``hdfs://``... need the
fsspec backend the user installs, and the error says which). OS errors become TF's error classes with TF's
messages (``path; No such file or directory``).
"""

import errno
import glob as _glob
import os
import re
import shutil
from datetime import datetime

from tensorweave import errors

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*)://")

_ERRNO_TO_ERROR = {
    errno.ENOENT: errors.NotFoundError, errno.EEXIST: errors.AlreadyExistsError,
    errno.EACCES: errors.PermissionDeniedError, errno.EPERM: errors.PermissionDeniedError,
    errno.EROFS: errors.PermissionDeniedError, errno.ENOTDIR: errors.FailedPreconditionError,
    errno.EISDIR: errors.FailedPreconditionError, errno.ENOTEMPTY: errors.FailedPreconditionError,
    errno.EBUSY: errors.FailedPreconditionError, errno.ENOSPC: errors.ResourceExhaustedError,
    errno.EFBIG: errors.OutOfRangeError, errno.EINVAL: errors.InvalidArgumentError,
    errno.ENAMETOOLONG: errors.InvalidArgumentError, errno.ELOOP: errors.FailedPreconditionError,
}
# fsspec raises OSError subclasses without an errno: their class says which.
_CLASS_TO_ERRNO = [(FileNotFoundError, errno.ENOENT), (FileExistsError, errno.EEXIST), (PermissionError, errno.EACCES),
                   (IsADirectoryError, errno.EISDIR), (NotADirectoryError, errno.ENOTDIR)]


def as_path(path):
    """A str path from str, bytes or os.PathLike."""
    path = os.fspath(path)
    return path.decode("utf-8") if isinstance(path, bytes) else path


def op_error(exc, path):
    """The TF error for an OSError ``exc`` about ``path``: TF's class, and TF's ``path; reason`` message."""
    code = exc.errno or next((code for py, code in _CLASS_TO_ERRNO if isinstance(exc, py)), None)
    reason = exc.strerror or (os.strerror(code) if code else str(exc) or type(exc).__name__)
    return _ERRNO_TO_ERROR.get(code, errors.UnknownError)(None, None, f"{path}; {reason}")


class LocalFileSystem:
    """Local files through the OS (paths returned in the form they were given)."""

    sep = os.sep
    join = staticmethod(os.path.join)

    def open(self, path, mode):
        return open(path, mode)  # noqa: SIM115 - GFile owns and closes it

    def exists(self, path):
        return os.path.exists(path)

    def isdir(self, path):
        return os.path.isdir(path)

    def listdir(self, path):
        return os.listdir(path)

    def mkdir(self, path):
        os.mkdir(path)

    def makedirs(self, path):
        """Creates ``path`` and its missing parents; a part that is a file fails as in TF."""
        part = path
        while part and not os.path.isdir(part):
            if os.path.exists(part):
                raise errors.FailedPreconditionError(None, None, f"{part} is not a directory")
            part = os.path.dirname(part.rstrip(os.sep))
        os.makedirs(path, exist_ok=True)

    def same_as(self, other):
        return other is self

    def remove(self, path):
        os.remove(path)

    def rename(self, src, dst):
        os.replace(src, dst)

    def copy(self, src, dst):
        shutil.copyfile(src, dst)

    def rmtree(self, path):
        shutil.rmtree(path)

    def glob(self, pattern):
        found = _glob.glob(pattern, include_hidden=True)
        if not os.path.dirname(pattern):  # TF joins matches to the pattern's directory, "." here
            found = [os.path.join(".", name) for name in found]
        return sorted(found)

    def stat(self, path):
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns, os.path.isdir(path)


class FsspecFileSystem:
    """One fsspec file system (one scheme); paths go in and come out as ``scheme://...`` URLs."""

    sep = "/"

    def __init__(self, fs, scheme):
        self._fs = fs
        self._scheme = scheme

    @staticmethod
    def join(parent, child):
        return parent.rstrip("/") + "/" + child if not parent.endswith("://") else parent + child

    def _url(self, stripped, like):
        """``stripped`` (fsspec's form, without the scheme) as a URL in the form of the caller's ``like``."""
        rest = like.split("://", 1)[1]
        return f"{self._scheme}://{stripped if rest.startswith('/') else stripped.lstrip('/')}"

    def open(self, path, mode):
        return self._fs.open(path, mode)

    def exists(self, path):
        return self._fs.exists(path)

    def isdir(self, path):
        return self._fs.isdir(path)

    def listdir(self, path):
        if not self._fs.isdir(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return [entry.rstrip("/").rsplit("/", 1)[-1] for entry in self._fs.ls(path, detail=False)]

    def mkdir(self, path):
        self._fs.mkdir(path, create_parents=False)

    def makedirs(self, path):
        self._fs.makedirs(path, exist_ok=True)

    def same_as(self, other):
        return isinstance(other, FsspecFileSystem) and other._fs is self._fs

    def remove(self, path):
        if self._fs.isdir(path):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        self._fs.rm_file(path)

    def rename(self, src, dst):
        self._fs.mv(src, dst)

    def copy(self, src, dst):
        if not self._fs.exists(src):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), src)
        self._fs.copy(src, dst)

    def rmtree(self, path):
        self._fs.rm(path, recursive=True)

    def glob(self, pattern):
        return sorted(self._url(p, pattern) for p in self._fs.glob(pattern))

    def stat(self, path):
        info = self._fs.info(path)
        modified = next((info[k] for k in ("mtime", "LastModified", "updated", "created") if info.get(k)), 0)
        if hasattr(modified, "timestamp"):
            modified = modified.timestamp()
        elif isinstance(modified, str):
            modified = datetime.fromisoformat(modified.replace("Z", "+00:00")).timestamp()
        return int(info.get("size") or 0), int(float(modified) * 1e9), info.get("type") == "directory"


_LOCAL = LocalFileSystem()


def filesystem(path):
    """(file system, path to give it) for ``path``; an unknown scheme or a missing backend is an
    UnimplementedError that names the package to install."""
    path = as_path(path)
    match = _SCHEME.match(path)
    if match is None:
        return _LOCAL, path
    scheme = match.group(1).lower()
    if scheme == "file":
        return _LOCAL, path[len(match.group(0)):]
    try:
        import fsspec
    except ImportError as exc:
        raise errors.UnimplementedError(
            None, None, f"File system scheme '{scheme}' not implemented (file: '{path}'): paths with a scheme go "
                        f"through fsspec, which is not installed: pip install fsspec") from exc
    try:
        return FsspecFileSystem(fsspec.filesystem(scheme), scheme), path
    except ValueError as exc:
        raise errors.UnimplementedError(
            None, None, f"File system scheme '{scheme}' not implemented (file: '{path}'): fsspec knows no "
                        f"'{scheme}' file system") from exc
    except ImportError as exc:
        raise errors.UnimplementedError(
            None, None, f"File system scheme '{scheme}' not implemented (file: '{path}'): {exc} "
                        f"(fsspec's backend for '{scheme}://' is a separate package)") from exc
