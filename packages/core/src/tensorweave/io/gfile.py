"""``tf.io.gfile``: files on any file system, with TF's semantics (and ``tf.gfile``'s implementation).

``GFile`` opens lazily, as TF's does: a missing file is reported (NotFoundError) at the first read, and a
file opened for writing appears at the first write. In text mode ``read(n)`` reads ``n`` bytes and returns
them decoded (UTF-8); ``tell``/``seek`` count bytes. Failures are ``tf.errors`` classes with TF's messages.
"""

from tensorweave import errors
from tensorweave.io.filesystems import as_path, filesystem, op_error

__all__ = ["GFile", "copy", "exists", "glob", "isdir", "listdir", "makedirs", "mkdir", "remove", "rename", "rmtree",
           "stat", "walk"]

_MODES = ("r", "w", "a", "r+", "w+", "a+")


def _call(method, path, *args):
    """``method`` of ``path``'s file system, its OSError turned into TF's error about ``path``."""
    fs, local = filesystem(path)
    try:
        return getattr(fs, method)(local, *args)
    except OSError as exc:
        raise op_error(exc, as_path(path)) from exc


class GFile:
    """A file on any supported file system; modes 'r', 'w', 'a', 'r+', 'w+', 'a+', each with 'b'."""

    def __init__(self, name, mode="r"):
        self._name = as_path(name)
        self._mode = mode
        self._binary = "b" in mode
        base = mode.replace("b", "")
        if base not in _MODES:
            raise errors.InvalidArgumentError(None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self._readable = base[0] == "r" or "+" in base
        self._writable = base[0] != "r" or "+" in base
        self._python_mode = base + "b"
        self._file = None

    @property
    def name(self):
        return self._name

    @property
    def mode(self):
        return self._mode

    def _handle(self, writing):
        if writing and not self._writable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
        if not writing and not self._readable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
        if self._file is None:
            self._file = _call("open", self._name, self._python_mode)
        return self._file

    def _io(self, writing, method, *args):
        try:
            return getattr(self._handle(writing), method)(*args)
        except OSError as exc:
            raise op_error(exc, self._name) from exc

    def _decoded(self, data):
        return data if self._binary else data.decode("utf-8")

    def size(self):
        """The file's length on its file system now (what was written but not flushed is not counted)."""
        return stat(self._name).length

    def write(self, file_content):
        """Writes str (encoded UTF-8) or bytes, whatever the mode."""
        data = file_content.encode("utf-8") if isinstance(file_content, str) else bytes(file_content)
        self._io(True, "write", data)

    def read(self, n=-1):
        """``n`` bytes (all that is left when ``n`` is -1), decoded in text mode."""
        return self._decoded(self._io(False, "read", -1 if n is None or n < 0 else n))

    def readline(self):
        return self._decoded(self._io(False, "readline"))

    def readlines(self):
        return [self._decoded(line) for line in self._io(False, "readlines")]

    def seek(self, offset=None, whence=0, position=None):
        """Moves to ``offset`` from the start, the current position or the end (whence 0, 1, 2);
        ``position`` is TF's older name for ``offset``."""
        if position is not None:
            if offset is not None:
                raise TypeError("position and offset cannot both be specified")
            offset = position
        if whence not in (0, 1, 2):
            raise errors.InvalidArgumentError(None, None,
                                              f"Invalid whence argument: {whence}. Valid values are 0, 1, or 2.")
        self._io(False, "seek", offset or 0, whence)

    def tell(self):
        return self._io(not self._readable, "tell")

    def seekable(self):
        return True

    def flush(self):
        if self._file is not None:
            self._io(self._writable, "flush")

    def close(self):
        """Closes the file; as with TF's GFile, a later read or write opens it again."""
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError as exc:
                raise op_error(exc, self._name) from exc

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __repr__(self):
        return f"<GFile {self._name!r} mode={self._mode!r}>"


class FileStatistics:
    """What ``stat`` tells: ``length`` in bytes, ``mtime_nsec`` (modified time, ns), ``is_directory``."""

    def __init__(self, length, mtime_nsec, is_directory):
        self.length = length
        self.mtime_nsec = mtime_nsec
        self.is_directory = is_directory

    def __repr__(self):
        return f"FileStatistics(length={self.length}, mtime_nsec={self.mtime_nsec}, is_directory={self.is_directory})"


def exists(path):
    return bool(_call("exists", path))


def isdir(path):
    return bool(_call("isdir", path))


def listdir(path):
    """The names (not paths) in directory ``path``, in no set order."""
    if not isdir(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {as_path(path)}")
    return list(_call("listdir", path))


def mkdir(path):
    """Creates one directory (its parent must exist); one that exists already is left as it is."""
    try:
        _call("mkdir", path)
    except errors.AlreadyExistsError:
        pass


def makedirs(path):
    """Creates ``path`` and its missing parents; a part that is a file is a FailedPreconditionError."""
    _call("makedirs", path)


def remove(path):
    _call("remove", path)


def rmtree(path):
    """Deletes a directory and everything under it (or a single file)."""
    if not exists(path):
        raise errors.NotFoundError(None, None, f"{as_path(path)} not found")
    _call("rmtree" if isdir(path) else "remove", path)


def _refuse_existing(path, overwrite):
    if not overwrite and exists(path):
        raise errors.AlreadyExistsError(None, None, "file already exists")


def rename(src, dst, overwrite=False):
    """Moves ``src`` to ``dst`` (across file systems by copying); an existing ``dst`` needs ``overwrite``."""
    _refuse_existing(dst, overwrite)
    fs, local_src = filesystem(src)
    fs_dst, local_dst = filesystem(dst)
    if not fs.same_as(fs_dst):
        copy(src, dst, overwrite=True)
        return remove(src)
    try:
        fs.rename(local_src, local_dst)
    except OSError as exc:
        raise op_error(exc, as_path(src)) from exc


def copy(src, dst, overwrite=False):
    """Copies a file, across file systems too (a local file to ``memory://``, ``gs://``...)."""
    _refuse_existing(dst, overwrite)
    fs, local_src = filesystem(src)
    fs_dst, local_dst = filesystem(dst)
    if not fs.same_as(fs_dst):
        with GFile(src, "rb") as reader, GFile(dst, "wb") as writer:
            return writer.write(reader.read())
    try:
        fs.copy(local_src, local_dst)
    except OSError as exc:
        raise op_error(exc, as_path(src)) from exc


def glob(pattern):
    """The paths matching ``pattern`` (``*``, ``?``, ``[...]``), in the form the pattern was given."""
    return list(_call("glob", pattern))


def stat(path):
    return FileStatistics(*_call("stat", path))


def walk(top, topdown=True, onerror=None):
    """Yields (directory, subdirectory names, file names) under ``top``, parents first when ``topdown``;
    a directory that cannot be listed is passed to ``onerror`` (or skipped)."""
    top = as_path(top)
    try:
        names = listdir(top)
    except errors.NotFoundError as exc:
        if onerror is not None:
            onerror(exc)
        return
    fs, _ = filesystem(top)
    subdirs, files = [], []
    for name in names:
        (subdirs if isdir(fs.join(top, name)) else files).append(name)
    if topdown:
        yield top, subdirs, files
    for name in subdirs:
        yield from walk(fs.join(top, name), topdown, onerror)
    if not topdown:
        yield top, subdirs, files
