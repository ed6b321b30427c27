"""``tf.gfile``: TF 1.x's names for file access (``GFile``, ``Exists``, ``MakeDirs``...), on ``tf.io.gfile``.

The functions keep TF 1.x's argument names (``tf.gfile.Rename(oldname, newname, overwrite)``), which differ
from ``tf.io.gfile``'s, so calls with keywords work as they did.
"""

from tensorweave.io import gfile as _io_gfile
from tensorweave.io.gfile import GFile

__all__ = ["Copy", "DeleteRecursively", "Exists", "FastGFile", "GFile", "Glob", "IsDirectory", "ListDirectory",
           "MakeDirs", "MkDir", "Open", "Remove", "Rename", "Stat", "Walk"]

Open = GFile


class FastGFile(GFile):
    """TF 1.x's deprecated "file without thread locking": here the same as GFile."""


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802 - TF's names, here and below
    _io_gfile.copy(oldpath, newpath, overwrite)


def DeleteRecursively(dirname):  # noqa: N802
    _io_gfile.rmtree(dirname)


def Exists(filename):  # noqa: N802
    return _io_gfile.exists(filename)


def Glob(filename):  # noqa: N802
    return _io_gfile.glob(filename)


def IsDirectory(dirname):  # noqa: N802
    return _io_gfile.isdir(dirname)


def ListDirectory(dirname):  # noqa: N802
    return _io_gfile.listdir(dirname)


def MakeDirs(dirname):  # noqa: N802
    _io_gfile.makedirs(dirname)


def MkDir(dirname):  # noqa: N802
    _io_gfile.mkdir(dirname)


def Remove(filename):  # noqa: N802
    _io_gfile.remove(filename)


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    _io_gfile.rename(oldname, newname, overwrite)


def Stat(filename):  # noqa: N802
    return _io_gfile.stat(filename)


def Walk(top, in_order=True):  # noqa: N802
    """(directory, subdirectory names, file names) under ``top``; parents first when ``in_order``."""
    return _io_gfile.walk(top, topdown=in_order)
