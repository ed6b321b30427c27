"""``tf.contrib.framework``: ``arg_scope`` and the variable helpers slim is built on."""

from tensorweave.contrib.framework import arg_scope as _arg_scope_module, variables as _variables_module
from tensorweave.contrib.framework.arg_scope import *  # noqa: F401,F403
from tensorweave.contrib.framework.variables import *  # noqa: F401,F403

from tensorweave.ops.cond import smart_cond  # noqa: E402

__all__ = _arg_scope_module.__all__ + _variables_module.__all__ + ["smart_cond"]
