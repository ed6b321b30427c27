"""``tf.flags`` (also ``tf.app.flags``): absl-py's flags, with the two changes TF 1.x made to them.

TF 1.x re-exported ``absl.flags`` and changed two things, both kept here: the ``DEFINE_string``,
``DEFINE_integer``, ``DEFINE_float`` and ``DEFINE_boolean``/``DEFINE_bool`` functions accept TF's old keyword
names (``flag_name``, ``default_value``, ``docstring``), and reading a flag from ``FLAGS`` before the command
line was parsed parses ``sys.argv`` first (absl alone raises ``UnparsedFlagAccessError``).
"""

import functools as _functools
import logging as _logging
import sys as _sys

from absl.flags import *  # noqa: F401,F403 - tf.flags is absl.flags
from absl.flags import DEFINE_boolean as _DEFINE_boolean
from absl.flags import DEFINE_float as _DEFINE_float
from absl.flags import DEFINE_integer as _DEFINE_integer
from absl.flags import DEFINE_string as _DEFINE_string
from absl.flags import FLAGS as _ABSL_FLAGS
from absl.flags import disclaim_key_flags as _disclaim_key_flags

# The wrappers below define flags on their callers' behalf: absl must credit the caller's module (the
# user's main module, whose flags --help lists as key flags), not this one.
_disclaim_key_flags()

_OLD_KEYWORDS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accept_old_keywords(define):
    """``define`` taking TF's pre-absl keyword names as well, with TF's warning when they are used."""
    @_functools.wraps(define)
    def wrapper(*args, **kwargs):
        old = [key for key in _OLD_KEYWORDS if key in kwargs]
        for key in old:
            kwargs[_OLD_KEYWORDS[key]] = kwargs.pop(key)
        if old:
            _logging.warning("Use of the keyword argument names (flag_name, default_value, docstring) is "
                             "deprecated, please use (name, default, help) instead.")
        return define(*args, **kwargs)
    return wrapper


DEFINE_string = _accept_old_keywords(_DEFINE_string)
DEFINE_boolean = _accept_old_keywords(_DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = _accept_old_keywords(_DEFINE_float)
DEFINE_integer = _accept_old_keywords(_DEFINE_integer)


class _ParseOnFirstRead:
    """absl's ``FLAGS``, except that reading a flag before parsing parses ``sys.argv`` (TF 1.x's rule).

    Everything else (defining, setting, ``FLAGS(argv)``, ``FLAGS['name']``, iteration) goes to absl's object,
    so flags defined through ``tf.flags`` and through ``absl.flags`` are one set, as under TF 1.x.
    """

    def __init__(self, flag_values):
        self.__dict__["_flag_values"] = flag_values

    def __getattribute__(self, name):
        if name == "__dict__":
            return object.__getattribute__(self, name)
        # absl's own attributes only: a flag is not one, so reading a flag falls through to __getattr__.
        return object.__getattribute__(self, "__dict__")["_flag_values"].__getattribute__(name)

    def __getattr__(self, name):
        # Reached only when absl's attribute lookup failed: a flag read (absl raises before parsing).
        flag_values = self.__dict__["_flag_values"]
        if not flag_values.is_parsed():
            flag_values(_sys.argv)
        return getattr(flag_values, name)

    def __setattr__(self, name, value):
        setattr(self.__dict__["_flag_values"], name, value)

    def __delattr__(self, name):
        delattr(self.__dict__["_flag_values"], name)

    def __dir__(self):
        return dir(self.__dict__["_flag_values"])

    def __getitem__(self, name):
        return self.__dict__["_flag_values"][name]

    def __setitem__(self, name, flag):
        self.__dict__["_flag_values"][name] = flag

    def __contains__(self, name):
        return name in self.__dict__["_flag_values"]

    def __len__(self):
        return len(self.__dict__["_flag_values"])

    def __iter__(self):
        return iter(self.__dict__["_flag_values"])

    def __str__(self):
        return str(self.__dict__["_flag_values"])

    def __call__(self, *args, **kwargs):
        return self.__dict__["_flag_values"](*args, **kwargs)


FLAGS = _ParseOnFirstRead(_ABSL_FLAGS)
