"""TensorFlow's internal module paths, which TF1 programs import directly (``from tensorflow.python.framework
import ops``, ``tf.python.ops.array_ops.shape``): each path is a view that serves the Tensorweave functions of the
same names, so such a program runs with ``tensorflow`` changed to ``tensorweave`` in its imports.

A view looks a name up in its sources in order, the public namespaces first (TF's internal ``array_ops.concat``
is the public ``tf.concat``), and imports them only when a name is asked for. Paths the table does not list
under ``ops``, ``framework``, ``training`` and ``platform`` get a view of the public namespaces."""

import importlib
import importlib.abc
import importlib.util
import sys
import types

_PUBLIC = ("tensorweave", "tensorweave.math", "tensorweave.nn", "tensorweave.linalg", "tensorweave.image",
           "tensorweave.sparse", "tensorweave.random", "tensorweave.io", "tensorweave.debugging")

# tensorflow.python.<path> -> the modules it is a view of (before the public namespaces, unless marked "only").
_VIEWS = {
    "framework.ops": ("tensorweave.framework.graph", "tensorweave.framework.tensor", "tensorweave.framework.operation",
                      "tensorweave.framework.tensor_conversion", "tensorweave.framework.registry"),
    "framework.dtypes": ("only", "tensorweave.dtypes"),
    "framework.errors": ("only", "tensorweave.errors"),
    "framework.errors_impl": ("only", "tensorweave.errors"),
    "framework.tensor_shape": ("only", "tensorweave.framework.tensor_shape"),
    "framework.tensor_util": ("tensorweave.framework.tensor_util",),
    "framework.graph_util": ("only", "tensorweave.framework.graph_util"),
    "framework.constant_op": (),
    "framework.sparse_tensor": ("tensorweave.framework.sparse_tensor",),
    "framework.random_seed": ("tensorweave.framework.random_seed",),
    "framework.indexed_slices": ("tensorweave.framework.indexed_slices",),
    "framework.test_util": ("only", "tensorweave.test"),
    "ops.rnn": ("tensorweave.nn",),
    "ops.rnn_cell": ("only", "tensorweave.nn.rnn_cell"),
    "ops.rnn_cell_impl": ("only", "tensorweave.nn.rnn_cell"),
    "ops.variable_scope": ("tensorweave.ops.variable_scope",),
    "ops.variables": ("tensorweave.ops.variables",),
    "ops.init_ops": ("tensorweave.ops.init_ops",),
    "ops.nn_impl": ("tensorweave.nn",),
    "ops.losses.losses": ("only", "tensorweave.losses"),
    "ops.metrics": ("only", "tensorweave.metrics"),
    "summary.summary": ("only", "tensorweave.summary"),
    "platform.gfile": ("only", "tensorweave.gfile"),
    "platform.tf_logging": ("only", "tensorweave.logging"),
    "platform.test": ("only", "tensorweave.test"),
    "platform.flags": ("only", "tensorweave.flags"),
    "platform.app": ("only", "tensorweave.app"),
    "util.compat": ("only", "tensorweave.compat"),
    "util.nest": ("only", "tensorweave.framework.nest"),
    "training.training": ("only", "tensorweave.train"),
    "training.training_util": ("only", "tensorweave.train"),
    "training.moving_averages": ("tensorweave.train.moving_averages", "tensorweave.train"),
    "training.saver": ("tensorweave.train.saver", "tensorweave.train"),
    "training.session_run_hook": ("only", "tensorweave.train"),
    "training.basic_session_run_hooks": ("only", "tensorweave.train"),
    "training.monitored_session": ("only", "tensorweave.train"),
    "training.checkpoint_utils": ("only", "tensorweave.train"),
    "training.optimizer": ("only", "tensorweave.train"),
    "client.session": ("tensorweave.runtime.session",),
    "client.timeline": ("only", "tensorweave.client.timeline"),
    "layers.core": ("only", "tensorweave.layers"),
    "layers.layers": ("only", "tensorweave.layers"),
    "layers.utils": ("tensorweave.layers", "tensorweave.ops.cond"),
    "framework.smart_cond": ("only", "tensorweave.ops.cond"),
    "client.device_lib": ("only", "tensorweave.client.device_lib"),
    "pywrap_tensorflow": ("tensorweave.train",),
}
# Folders a program may import any module of: those not in _VIEWS are views of the public namespaces.
_OPEN_FOLDERS = ("ops", "framework", "training", "platform", "util", "layers", "client", "summary")


class ModuleView(types.ModuleType):
    """``tensorflow.python.<path>``: names looked up in ``sources`` (module names, imported when first needed)."""

    def __init__(self, path, sources):
        super().__init__(f"{__name__}.{path}", f"TensorFlow's tensorflow.python.{path}, served by {', '.join(sources)}")
        self._tf_path = path
        self._sources = sources

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        for source in self._sources:
            module = importlib.import_module(source)
            if hasattr(module, attr):
                value = getattr(module, attr)
                setattr(self, attr, value)
                return value
        raise AttributeError(f"tensorflow.python.{self._tf_path}.{attr} has no Tensorweave counterpart (looked in "
                             f"{', '.join(self._sources)}); use the public tf.* name if TF1 has one")

    def __dir__(self):
        names = set(super().__dir__())
        for source in self._sources:
            names.update(n for n in dir(importlib.import_module(source)) if not n.startswith("_"))
        return sorted(names)


def _sources(path):
    listed = _VIEWS.get(path)
    if listed is None:
        return _PUBLIC
    if listed[:1] == ("only",):
        return listed[1:]
    own = f"tensorweave.{path}"  # ops.array_ops -> tensorweave.ops.array_ops, after the public names
    extra = (own,) if path.startswith("ops.") and importlib.util.find_spec(own) is not None else ()
    return _PUBLIC + listed + extra


def _folder(path):
    """The package-like module of folder ``path`` ("" for tensorweave.python itself)."""
    if not path:
        return sys.modules[__name__]
    name = f"{__name__}.{path}"
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name, f"TensorFlow's tensorflow.python.{path} folder")
        module.__path__ = []
        sys.modules[name] = module
        parent, _, leaf = path.rpartition(".")
        setattr(_folder(parent), leaf, module)
    return module


def _view(path):
    name = f"{__name__}.{path}"
    module = sys.modules.get(name)
    if module is None:
        module = ModuleView(path, _sources(path))
        sys.modules[name] = module
        parent, _, leaf = path.rpartition(".")
        setattr(_folder(parent), leaf, module)
    return module


class _ViewFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``tensorweave.python.<folder>.<module>`` paths the table does not list (``gen_math_ops``...)."""

    def find_spec(self, fullname, path=None, target=None):
        prefix = f"{__name__}."
        if not fullname.startswith(prefix):
            return None
        path = fullname[len(prefix):]
        if path.split(".")[0] not in _OPEN_FOLDERS or path in _OPEN_FOLDERS:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return _view(spec.name[len(__name__) + 1:])

    def exec_module(self, module):
        pass


def __getattr__(folder):
    if folder in _OPEN_FOLDERS:
        return _folder(folder)
    if importlib.util.find_spec(f"{__name__}.{folder}") is not None:  # a module of its own here (tf2)
        return importlib.import_module(f"{__name__}.{folder}")
    raise AttributeError(f"module {__name__!r} has no attribute {folder!r}")


class _OpenFolder(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _view(f"{self.__name__[len(__name__) + 1:]}.{attr}")


for _path in _VIEWS:
    _view(_path)
for _name in _OPEN_FOLDERS:
    _folder(_name).__class__ = _OpenFolder
sys.meta_path.append(_ViewFinder())
